// The Secrets an instance names, the keys each needs, and the Secret
// objects `create secret` makes (compared with the upstream CLI's output in
// tests/cli/upstream_test.sh).
#include "core/reconcile/secrets.h"

#include <doctest/doctest.h>

#include "../instance/support.h"
#include "../kube/fake_cluster.h"
#include "../test_certificates.h"
#include "core/reconcile/preflight.h"

namespace fluxop::reconcile {
namespace {

using nlohmann::json;

TEST_CASE("secret_object: members sorted, the type of the kind") {
  nlohmann::ordered_json secret =
      secret_object(SecretKind::basic_auth, "git", "apps", {{"username", "u"}, {"password", "p"}},
                    {{"team", "a"}}, {{"b", "1"}, {"a", "2"}});
  CHECK(secret.dump() ==
        R"({"apiVersion":"v1","kind":"Secret","metadata":{"annotations":{"a":"2","b":"1"},)"
        R"("labels":{"team":"a"},"name":"git","namespace":"apps"},)"
        R"("stringData":{"password":"p","username":"u"},"type":"kubernetes.io/basic-auth"})");
  CHECK(secret_object(SecretKind::tls, "t", "n", {{"ca.crt", "x"}}, {}, {})["type"] == "Opaque");
  CHECK(secret_object(SecretKind::tls, "t", "n", {{"tls.crt", "x"}, {"tls.key", "y"}}, {},
                      {})["type"] == "kubernetes.io/tls");
  CHECK(secret_object(SecretKind::registry, "r", "n", {}, {}, {})["type"] ==
        "kubernetes.io/dockerconfigjson");
  CHECK(secret_object(SecretKind::ssh, "s", "n", {}, {}, {})["type"] == "Opaque");
}

TEST_CASE("secret_object and apply_secret: a value that is not UTF-8 is kept byte for byte") {
  // A DER certificate's first bytes.
  std::string der("\x30\x82\x01\xff\x00", 5);
  nlohmann::ordered_json secret =
      secret_object(SecretKind::tls, "t", "n", {{"ca.crt", der}, {"note", "text"}}, {}, {});
  CHECK(secret.dump() ==
        R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"t","namespace":"n"},)"
        R"("data":{"ca.crt":"MIIB/wA="},"stringData":{"note":"text"},"type":"Opaque"})");
  testing::FakeCluster cluster;
  CHECK(apply_secret(cluster, secret, false) == "created");
  CHECK(cluster.objects.at("Secret/n/t")["data"] ==
        json{{"ca.crt", "MIIB/wA="}, {"note", "dGV4dA=="}});
  // Bytes alone: no empty stringData beside them.
  nlohmann::ordered_json bytes_only =
      secret_object(SecretKind::tls, "t", "n", {{"ca.crt", der}}, {}, {});
  CHECK_FALSE(bytes_only.contains("stringData"));
  apply_secret(cluster, bytes_only, false);
  CHECK(cluster.objects.at("Secret/n/t")["data"] == json{{"ca.crt", "MIIB/wA="}});
}

TEST_CASE("secret_data: each kind's keys, the optional ones only when given") {
  SecretInput input;
  input.username = "u";
  input.password = "p";
  input.server = "ghcr.io";
  input.address = "http://proxy:3128";
  CHECK(secret_data(SecretKind::basic_auth, input) ==
        std::map<std::string, std::string>{{"username", "u"}, {"password", "p"}});
  CHECK(secret_data(SecretKind::registry, input) ==
        std::map<std::string, std::string>{
            {".dockerconfigjson", docker_config_json("ghcr.io", "u", "p")}});
  CHECK(secret_data(SecretKind::proxy, input).size() == 3);
  input.username = input.password = "";
  CHECK(secret_data(SecretKind::proxy, input) ==
        std::map<std::string, std::string>{{"address", "http://proxy:3128"}});
  input.identity = "key";
  input.known_hosts = "hosts";
  CHECK(secret_data(SecretKind::ssh, input) ==
        std::map<std::string, std::string>{{"identity", "key"}, {"known_hosts", "hosts"}});
  input.identity_pub = "";
  CHECK(secret_data(SecretKind::ssh, input).at("identity.pub").empty());
  input.app_id = "1";
  input.app_private_key = "pem";
  input.installation_id = "2";
  CHECK(secret_data(SecretKind::githubapp, input) ==
        std::map<std::string, std::string>{{"githubAppID", "1"},
                                           {"githubAppPrivateKey", "pem"},
                                           {"githubAppInstallationID", "2"}});
  input.sops_keys = {{"AGE-SECRET-KEY-1", true}, {"-----BEGIN PGP", false}};
  std::map<std::string, std::string> sops = secret_data(SecretKind::sops, input);
  CHECK(sops.at(sops_key_name("AGE-SECRET-KEY-1", true)) == "AGE-SECRET-KEY-1");
  CHECK(sops.at(sops_key_name("-----BEGIN PGP", false)) == "-----BEGIN PGP");
}

TEST_CASE("secret_data: tls takes a certificate with its own key only") {
  testing::TempDir dir;
  testing::make_certificates(dir, {"ca", "other"}, {});
  SecretInput input;
  input.ca_crt = testing::file_text(dir, "ca.pem");
  CHECK(secret_data(SecretKind::tls, input) ==
        std::map<std::string, std::string>{{"ca.crt", input.ca_crt}});
  input.tls_crt = testing::file_text(dir, "ca.pem");
  input.tls_key = testing::file_text(dir, "ca.key");
  CHECK(secret_data(SecretKind::tls, input).size() == 3);
  input.tls_key = testing::file_text(dir, "other.key");
  CHECK_THROWS_WITH_AS(secret_data(SecretKind::tls, input),
                       "not a PEM certificate and its private key", Error);
  input.tls_crt = input.tls_key = "";
  CHECK_THROWS_AS(secret_data(SecretKind::tls, input), Error);
}

TEST_CASE("sops_key_name: the key's Adler-32, the extension of its kind") {
  CHECK(sops_key_name("Wikipedia", true) == "300286872.agekey");
  CHECK(sops_key_name("Wikipedia", false) == "300286872.asc");
  CHECK(sops_key_name("", true) == "1.agekey");
}

TEST_CASE("docker_config_json: one entry, the auth encoded, HTML characters escaped") {
  CHECK(docker_config_json("ghcr.io", "bot", "a<b") ==
        "{\n  \"auths\": {\n    \"ghcr.io\": {\n      \"username\": \"bot\",\n      "
        "\"password\": \"a\\u003cb\",\n      \"auth\": \"Ym90OmE8Yg==\"\n    }\n  }\n}");
}

TEST_CASE("named_secrets and secret_problem: the keys each reader needs") {
  instance::FluxInstance flux = instance::testing::load_minimal_with(
      "  sync: {kind: GitRepository, url: 'https://example.com/repo.git', ref: main, path: "
      "clusters, pullSecret: git-auth}\n");
  flux.distribution.image_pull_secret = "regcred";
  std::vector<NamedSecret> secrets = named_secrets(flux);
  REQUIRE(secrets.size() == 2);
  CHECK(secrets[0].field == ".spec.sync.pullSecret");
  CHECK(secrets[1].field == ".spec.distribution.imagePullSecret");
  CHECK(secret_problem(secrets[0], std::nullopt) == "does not exist");
  json basic = {{"type", "kubernetes.io/basic-auth"},
                {"data", {{"username", "dQ=="}, {"password", "cA=="}}}};
  CHECK(secret_problem(secrets[0], basic) == std::nullopt);
  json ssh = {{"data", {{"identity", "x"}, {"known_hosts", "y"}}}};
  CHECK(secret_problem(secrets[0], ssh) == std::nullopt);
  json half = {{"data", {{"username", "dQ=="}}}};
  CHECK(secret_problem(secrets[0], half) ==
        "has not the keys the GitRepository flux-system reads: username and password; or "
        "identity and known_hosts; or bearerToken; or ca.crt");
  CHECK(secret_problem(secrets[1], basic) ==
        "is of type kubernetes.io/basic-auth, not kubernetes.io/dockerconfigjson");
  CHECK(secret_problem(secrets[1], json{{"type", "kubernetes.io/dockerconfigjson"},
                                        {"data", {{".dockerconfigjson", "e30="}}}}) ==
        std::nullopt);
}

TEST_CASE("check secrets: each named Secret read in the instance's namespace") {
  testing::FakeCluster cluster;
  cluster.served.insert("/v1/Secret");
  instance::FluxInstance flux = instance::testing::load_minimal_with(
      "  sync: {kind: OCIRepository, url: 'oci://ghcr.io/org/repo', ref: latest, path: ./, "
      "pullSecret: oci-auth}\n");
  CheckResult missing = check_secrets(cluster, flux);
  CHECK(missing.status == CheckStatus::failed);
  CHECK(missing.message ==
        "Secret flux-system/oci-auth (.spec.sync.pullSecret) does not exist (fluxopctl create "
        "secret makes one; see its --help)");
  cluster.put({{"apiVersion", "v1"},
               {"kind", "Secret"},
               {"metadata", {{"name", "oci-auth"}, {"namespace", "flux-system"}}},
               {"type", "kubernetes.io/dockerconfigjson"},
               {"data", {{".dockerconfigjson", "e30="}}}});
  CheckResult found = check_secrets(cluster, flux);
  CHECK(found.status == CheckStatus::ok);
  CHECK(found.message ==
        "Secret flux-system/oci-auth (.spec.sync.pullSecret) exists with the keys its reader "
        "needs");
  CHECK(check_secrets(cluster, instance::testing::load_minimal_with("")).message ==
        "the instance names no Secret");
}

}  // namespace
}  // namespace fluxop::reconcile
