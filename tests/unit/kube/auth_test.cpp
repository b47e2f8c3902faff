#include "core/kube/auth.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <thread>

#include "../temp_dir.h"
#include "core/base64.h"
#include "core/error.h"
#include "core/file.h"

using fluxop::Error;
using fluxop::kube::Authenticator;
using fluxop::kube::ClusterAccess;
using fluxop::kube::ExecPlugin;
using fluxop::testing::TempDir;

namespace {

// A plugin that counts its runs in DIR/runs and answers with a token naming
// the run, the REGION it was given and whether it had the cluster's server.
ExecPlugin counting_plugin(const TempDir& dir, const std::string& expiry) {
  dir.write("plugin", R"(#!/bin/sh
runs=$(($(cat "$0.runs" 2>/dev/null || echo 0) + 1))
echo "$runs" > "$0.runs"
case "$KUBERNETES_EXEC_INFO" in *'"server":"https://k:6443"'*) info=server;; *) info=none;; esac
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"run%s-%s-%s")" +
                          expiry + R"(}}\n' "$runs" "$REGION" "$info"
)");
  chmod((dir.path() / "plugin").c_str(), 0755);
  ExecPlugin plugin;
  plugin.api_version = "client.authentication.k8s.io/v1";
  plugin.command = (dir.path() / "plugin").string();
  plugin.env = {"REGION=eu"};
  plugin.provide_cluster_info = true;
  plugin.origin = "config: users[0].user.exec";
  return plugin;
}

ClusterAccess with_plugin(ExecPlugin plugin) {
  ClusterAccess access;
  access.server = "https://k:6443";
  access.exec = std::move(plugin);
  return access;
}

}  // namespace

TEST_CASE("auth: static token, Basic, client certificate") {
  ClusterAccess access;
  access.token = "abc";
  access.client_cert_pem = "CERT";
  access.client_key_pem = "KEY";
  Authenticator token(access);
  CHECK(token.current().authorization == "Bearer abc");
  CHECK(token.current().client_cert_pem == "CERT");
  CHECK_FALSE(token.forget());

  ClusterAccess basic;
  basic.username = "user";
  basic.password = "pass";
  CHECK(Authenticator(basic).current().authorization ==
        "Basic " + fluxop::base64_encode("user:pass"));
}

TEST_CASE("auth: a token file is read again when it changes") {
  TempDir dir;
  dir.write("token", "first\n");
  ClusterAccess access;
  access.token_file = (dir.path() / "token").string();
  Authenticator auth(access);
  CHECK(auth.current().authorization == "Bearer first");
  dir.write("token", "second-rotated\n");  // another size: seen even within one mtime tick
  CHECK(auth.current().authorization == "Bearer second-rotated");
  std::filesystem::remove(dir.path() / "token");
  CHECK_THROWS_WITH_AS(auth.current(), (access.token_file + ": cannot read the token file").c_str(),
                       Error);
}

TEST_CASE("auth: an exec plugin's token is kept until it expires, and dropped after a 401") {
  TempDir dir;
  Authenticator auth(
      with_plugin(counting_plugin(dir, R"(,"expirationTimestamp":"2999-01-01T00:00:00Z")")));
  CHECK(auth.current().authorization == "Bearer run1-eu-server");
  CHECK(auth.current().authorization == "Bearer run1-eu-server");
  CHECK(auth.exec_runs() == 1);
  CHECK(auth.forget());
  CHECK(auth.current().authorization == "Bearer run2-eu-server");
  CHECK(auth.exec_runs() == 2);

  TempDir expired_dir;
  Authenticator expired(with_plugin(
      counting_plugin(expired_dir, R"(,"expirationTimestamp":"2020-01-01T00:00:00+01:00")")));
  CHECK(expired.current().authorization == "Bearer run1-eu-server");
  CHECK(expired.current().authorization == "Bearer run2-eu-server");
}

TEST_CASE("auth: exec plugin failures name the plugin, not its output") {
  TempDir dir;
  ExecPlugin plugin = counting_plugin(dir, "");
  dir.write("plugin", "#!/bin/sh\necho secret-on-stdout\nexit 3\n");
  CHECK_THROWS_WITH_AS(
      Authenticator(with_plugin(plugin)).current(),
      ("config: users[0].user.exec: \"" + plugin.command + "\": exit status 3").c_str(), Error);

  dir.write("plugin",
            "#!/bin/sh\necho "
            "'{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/"
            "v1beta1\",\"status\":{\"token\":\"t\"}}'\n");
  CHECK_THROWS_WITH_AS(
      Authenticator(with_plugin(plugin)).current(),
      ("config: users[0].user.exec: \"" + plugin.command +
       "\": answered apiVersion \"client.authentication.k8s.io/v1beta1\", the kubeconfig asks for "
       "\"client.authentication.k8s.io/v1\"")
          .c_str(),
      Error);

  // A plugin that prints without end is stopped at 1 MiB, not read into memory.
  dir.write("plugin", "#!/bin/sh\nexec yes secret\n");
  CHECK_THROWS_WITH_AS(
      Authenticator(with_plugin(plugin)).current(),
      ("config: users[0].user.exec: \"" + plugin.command + "\": printed more than 1 MiB").c_str(),
      Error);

  plugin.command = "fluxopctl-test-no-such-plugin";
  plugin.install_hint = "install it with apt";
  CHECK_THROWS_WITH_AS(
      Authenticator(with_plugin(plugin)).current(),
      "config: users[0].user.exec: \"fluxopctl-test-no-such-plugin\": not found or "
      "not executable (install it with apt)",
      Error);
}

TEST_CASE("auth: ExecCredential with a client certificate") {
  ExecPlugin plugin;
  plugin.api_version = "client.authentication.k8s.io/v1beta1";
  plugin.command = "p";
  plugin.origin = "o";
  auto credential = fluxop::kube::parse_exec_credential(
      R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",
          "status":{"clientCertificateData":"CERT","clientKeyData":"KEY",
                    "expirationTimestamp":"2030-05-06T07:08:09.123Z"}})",
      plugin);
  CHECK(credential.token.empty());
  CHECK(credential.client_cert_pem == "CERT");
  CHECK(credential.client_key_pem == "KEY");
  REQUIRE(credential.expires);
  CHECK(std::chrono::system_clock::to_time_t(*credential.expires) == 1904281689);
  CHECK_THROWS_WITH_AS(
      fluxop::kube::parse_exec_credential(
          R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{}})",
          plugin),
      "o: \"p\": its ExecCredential has neither a token nor a client certificate", Error);
}

TEST_CASE("auth: a token that would end its header, a token file too large or not a file") {
  TempDir dir;
  ClusterAccess access;
  access.token_file = (dir.path() / "token").string();
  dir.write("token", "abc\r\nX-Injected: 1\n");
  CHECK_THROWS_WITH_AS(Authenticator(access).current(),
                       (access.token_file + ": the token holds a line break").c_str(), Error);
  dir.write("token", std::string(2 << 20, 'a'));
  CHECK_THROWS_WITH_AS(
      Authenticator(access).current(),
      (access.token_file + ": larger than 1 MiB, the most an input may be").c_str(), Error);
  REQUIRE(mkfifo((dir.path() / "fifo").c_str(), 0600) == 0);
  access.token_file = (dir.path() / "fifo").string();  // nobody writes to it: must not hang
  CHECK_THROWS_WITH_AS(Authenticator(access).current(),
                       (access.token_file + ": cannot read the token file").c_str(), Error);

  ExecPlugin plugin = counting_plugin(dir, "");
  dir.write("plugin",
            "#!/bin/sh\nprintf '{\"kind\":\"ExecCredential\",\"apiVersion\":\"client."
            "authentication.k8s.io/v1\",\"status\":{\"token\":\"t\\\\r\\\\nX: 1\"}}'\n");
  CHECK_THROWS_WITH_AS(Authenticator(with_plugin(plugin)).current(),
                       ("config: users[0].user.exec: \"" + plugin.command +
                        "\": its ExecCredential's status.token holds a line break")
                           .c_str(),
                       Error);
  dir.write("plugin", "#!/bin/sh\nyes '[[[[[[[['\n");
  CHECK_THROWS_WITH_AS(
      Authenticator(with_plugin(plugin)).current(),
      ("config: users[0].user.exec: \"" + plugin.command + "\": printed more than 1 MiB").c_str(),
      Error);
}
