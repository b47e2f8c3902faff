// The client against an HTTPS API server (the fake server with a throwaway
// CA and server certificates made by the openssl CLI), reached through a
// kubeconfig as kubectl reads it: the right CA works, a wrong CA or a
// certificate for another name fails with the server and context named,
// insecure-skip-tls-verify works, tls-server-name is refused.
#include <doctest/doctest.h>

#include <string>

#include "../temp_dir.h"
#include "../test_certificates.h"
#include "core/base64.h"
#include "core/error.h"
#include "core/kube/client.h"
#include "core/kube/kubeconfig.h"
#include "fake_api_server.h"

namespace {

using fluxop::testing::FakeApiServer;
using fluxop::testing::FakeRequest;
using fluxop::testing::FakeResponse;
using fluxop::testing::FakeTlsIdentity;
using fluxop::testing::TempDir;

// Under DIR: ca.pem (signs server.pem, for 127.0.0.1, and misnamed.pem, for
// elsewhere.example only) and other-ca.pem, which signs nothing here.
void make_certificates(const TempDir& dir) {
  fluxop::testing::make_certificates(dir, {"ca", "other-ca"},
                                     {{"server", "ca", "subjectAltName=IP:127.0.0.1"},
                                      {"misnamed", "ca", "subjectAltName=DNS:elsewhere.example"}});
}

// A kubeconfig whose context "tls" names SERVER with the CLUSTER_FIELDS.
std::string write_kubeconfig(const TempDir& dir, const std::string& server,
                             const std::string& cluster_fields) {
  dir.write("config",
            "apiVersion: v1\nkind: Config\ncurrent-context: tls\n"
            "clusters:\n- name: fake\n  cluster:\n    server: " +
                server + "\n" + cluster_fields +
                "users:\n- name: u\n  user: {token: t}\n"
                "contexts:\n- name: tls\n  context: {cluster: fake, user: u}\n");
  return (dir.path() / "config").string();
}

std::string ca_data(const TempDir& dir, const std::string& name) {
  return "    certificate-authority-data: " +
         fluxop::base64_encode(fluxop::testing::file_text(dir, name)) + "\n";
}

fluxop::kube::ClusterAccess access_from(const std::string& kubeconfig, const TempDir& dir) {
  fluxop::kube::Environment env;
  env.home = dir.str();
  env.service_account_dir = (dir.path() / "no-service-account").string();
  return fluxop::kube::load_cluster_access({kubeconfig, ""}, env);
}

FakeResponse version(const FakeRequest&) { return {200, R"({"gitVersion":"v1.34.0"})", ""}; }

// The error of a GET /version through KUBECONFIG (empty when it succeeded).
std::string get_error(const std::string& kubeconfig, const TempDir& dir) {
  fluxop::kube::KubeClient client(access_from(kubeconfig, dir));
  try {
    int status = client.request("GET", "/version").status;
    CHECK(status == 200);
  } catch (const fluxop::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE(
    "client: HTTPS with the kubeconfig's CA, a wrong CA or name fails naming server and "
    "context, insecure-skip-tls-verify") {
  TempDir dir;
  make_certificates(dir);
  FakeTlsIdentity server_identity{(dir.path() / "server.pem").string(),
                                  (dir.path() / "server.key").string()};
  FakeApiServer server(version, server_identity);
  REQUIRE(server.url().starts_with("https://127.0.0.1:"));

  SUBCASE("the right CA") {
    CHECK(get_error(write_kubeconfig(dir, server.url(), ca_data(dir, "ca.pem")), dir) == "");
    CHECK(server.requests().size() == 1);
    CHECK(server.failed_handshakes() == 0);
  }
  SUBCASE("a wrong CA: refused, not retried, nothing sent") {
    std::string error =
        get_error(write_kubeconfig(dir, server.url(), ca_data(dir, "other-ca.pem")), dir);
    CAPTURE(error);
    CHECK(error.starts_with(server.url() + "/version: "));
    CHECK(error.find("(the server's certificate is not signed by the given CA)") !=
          std::string::npos);
    CHECK(error.ends_with(" (context \"tls\")"));
    CHECK(error.find("(after ") == std::string::npos);  // not retried
    CHECK(server.requests().empty());
    CHECK(server.failed_handshakes(1) == 1);
  }
  SUBCASE("no CA: the system's trust store does not know the throwaway CA") {
    std::string error = get_error(write_kubeconfig(dir, server.url(), ""), dir);
    CAPTURE(error);
    CHECK(error.starts_with(server.url() + "/version: "));
    CHECK(error.find("set SSL_CERT_FILE") != std::string::npos);
    CHECK(server.requests().empty());
  }
  SUBCASE("insecure-skip-tls-verify: true, without the CA") {
    CHECK(get_error(write_kubeconfig(dir, server.url(), "    insecure-skip-tls-verify: true\n"),
                    dir) == "");
    CHECK(server.requests().size() == 1);
  }
}

TEST_CASE("client: a certificate for another name fails, even signed by the right CA") {
  TempDir dir;
  make_certificates(dir);
  FakeApiServer server(version, FakeTlsIdentity{(dir.path() / "misnamed.pem").string(),
                                                (dir.path() / "misnamed.key").string()});
  std::string error = get_error(write_kubeconfig(dir, server.url(), ca_data(dir, "ca.pem")), dir);
  CAPTURE(error);
  CHECK(error.starts_with(server.url() + "/version: "));
  CHECK(error.find("host name '127.0.0.1'") != std::string::npos);
  CHECK(error.find("not signed by") == std::string::npos);
  CHECK(error.ends_with(" (context \"tls\")"));
  CHECK(server.requests().empty());
}

TEST_CASE("kubeconfig: tls-server-name is refused, naming the file and field") {
  TempDir dir;
  std::string kubeconfig =
      write_kubeconfig(dir, "https://127.0.0.1:6443", "    tls-server-name: kubernetes\n");
  CHECK_THROWS_WITH_AS(access_from(kubeconfig, dir),
                       (kubeconfig + ": clusters[0].cluster.tls-server-name: not supported by "
                                     "fluxopctl (libcurl cannot verify another name than the "
                                     "server URL's host)")
                           .c_str(),
                       fluxop::Error);
}
