#include "core/kube/kubeconfig.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include "../temp_dir.h"
#include "core/base64.h"
#include "core/error.h"

using fluxop::Error;
using fluxop::kube::ClusterAccess;
using fluxop::kube::Environment;
using fluxop::kube::KubeconfigFlags;
using fluxop::kube::load_cluster_access;
using fluxop::testing::TempDir;

namespace {

// No kubeconfig anywhere and not in a cluster, unless a test says otherwise.
Environment empty_environment(const TempDir& dir) {
  Environment env;
  env.home = (dir.path() / "home").string();
  env.service_account_dir = (dir.path() / "serviceaccount").string();
  return env;
}

constexpr const char* kAdmin = R"(apiVersion: v1
kind: Config
current-context: admin
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority: pki/ca.crt
users:
- name: admin
  user:
    token: secret-admin-token
contexts:
- name: other
  context: {cluster: local}
- name: admin
  context:
    cluster: local
    user: admin
    namespace: flux-system
- name: broken
  context:
    cluster: nowhere
    user: admin
)";

}  // namespace

TEST_CASE("kubeconfig: one file, CA relative to it, token, the context's namespace") {
  TempDir dir;
  dir.write("conf/config", kAdmin);
  dir.write("conf/pki/ca.crt", "CA PEM");
  Environment env = empty_environment(dir);
  ClusterAccess access = load_cluster_access({(dir.path() / "conf/config").string(), ""}, env);
  CHECK(access.origin == (dir.path() / "conf/config").string());
  CHECK(access.context == "admin");
  CHECK(access.server == "https://127.0.0.1:6443");
  CHECK(access.ca_pem == "CA PEM");
  CHECK(access.token == "secret-admin-token");
  CHECK(access.default_namespace == "flux-system");
  CHECK_FALSE(access.insecure_skip_tls_verify);

  ClusterAccess other = load_cluster_access({(dir.path() / "conf/config").string(), "other"}, env);
  CHECK(other.token.empty());
  CHECK(other.default_namespace == "default");
}

TEST_CASE("kubeconfig: ~/.kube/config when neither --kubeconfig nor $KUBECONFIG") {
  TempDir dir;
  dir.write("home/.kube/config", kAdmin);
  dir.write("home/.kube/pki/ca.crt", "CA PEM");
  ClusterAccess access = load_cluster_access({}, empty_environment(dir));
  CHECK(access.context == "admin");
  CHECK(access.ca_pem == "CA PEM");
}

TEST_CASE("kubeconfig: errors name the file and the field, never a credential") {
  TempDir dir;
  dir.write("config", kAdmin);
  dir.write("pki/ca.crt", "CA PEM");
  std::string file = (dir.path() / "config").string();
  Environment env = empty_environment(dir);
  CHECK_THROWS_WITH_AS(
      load_cluster_access({file, "broken"}, env),
      (file + ": contexts[2].context.cluster: no cluster named \"nowhere\"").c_str(), Error);
  CHECK_THROWS_WITH_AS(load_cluster_access({file, "y"}, env),
                       ("--context: no context named \"y\" in " + file).c_str(), Error);
  CHECK_THROWS_WITH_AS(load_cluster_access({file + ".missing", ""}, env),
                       ("--kubeconfig: " + file + ".missing: No such file or directory").c_str(),
                       Error);

  dir.write("bad-data", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://h", certificate-authority-data: "not base64!"}}]
users: [{name: u, user: {client-certificate-data: "c2VjcmV0", token: "t0ps3cret"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
  std::string bad = (dir.path() / "bad-data").string();
  CHECK_THROWS_WITH_AS(
      load_cluster_access({bad, ""}, env),
      (bad + ": clusters[0].cluster.certificate-authority-data: not base64").c_str(), Error);

  dir.write("half-cert", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://h"}}]
users: [{name: u, user: {client-certificate-data: "c2VjcmV0", token: "t0ps3cret"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
  std::string half = (dir.path() / "half-cert").string();
  try {
    load_cluster_access({half, ""}, env);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == half + ": users[0].user: client-certificate without client-key");
  }

  dir.write("no-current", "clusters: []\ncontexts: [{name: c, context: {cluster: k}}]\n");
  std::string none = (dir.path() / "no-current").string();
  CHECK_THROWS_WITH_AS(load_cluster_access({none, ""}, env),
                       (none + ": no current-context (choose one with --context)").c_str(), Error);
}

TEST_CASE("kubeconfig: $KUBECONFIG files merged, the first to set a name or current-context wins") {
  TempDir dir;
  dir.write("a", R"(current-context: from-a
clusters:
- name: shared
  cluster: {server: "https://a.example:6443", insecure-skip-tls-verify: true}
contexts:
- name: from-a
  context: {cluster: shared, user: only-in-b}
)");
  dir.write("b", R"(current-context: from-b
clusters:
- name: shared
  cluster: {server: "https://b.example:6443"}
users:
- name: only-in-b
  user:
    client-certificate-data: )" +
                     fluxop::base64_encode("CERT") + R"(
    client-key: key.pem
contexts:
- name: from-b
  context: {cluster: shared}
- name: from-a
  context: {cluster: nowhere}
)");
  dir.write("key.pem", "KEY");
  Environment env = empty_environment(dir);
  env.kubeconfig = (dir.path() / "missing").string() + "::" + (dir.path() / "a").string() + ":" +
                   (dir.path() / "b").string();
  ClusterAccess access = load_cluster_access({}, env);
  CHECK(access.context == "from-a");
  CHECK(access.origin == (dir.path() / "a").string());
  CHECK(access.server == "https://a.example:6443");
  CHECK(access.insecure_skip_tls_verify);
  CHECK(access.client_cert_pem == "CERT");
  CHECK(access.client_key_pem == "KEY");  // relative to b, which defines the user

  ClusterAccess b = load_cluster_access({"", "from-b"}, env);
  CHECK(b.server == "https://a.example:6443");  // "shared" is a's
  CHECK(b.client_cert_pem.empty());
}

TEST_CASE("kubeconfig: the contexts of every file of $KUBECONFIG, once each, sorted") {
  TempDir dir;
  dir.write("a",
            "contexts:\n- name: staging-2\n  context: {cluster: c}\n"
            "- name: prod\n  context: {cluster: c}\n");
  dir.write("b",
            "contexts:\n- name: staging-1\n  context: {cluster: c}\n"
            "- name: prod\n  context: {cluster: other}\n");
  Environment env = empty_environment(dir);
  env.kubeconfig = (dir.path() / "a").string() + ":" + (dir.path() / "b").string();
  CHECK(fluxop::kube::context_names({}, env) ==
        std::vector<std::string>{"prod", "staging-1", "staging-2"});
  CHECK(fluxop::kube::context_names({(dir.path() / "b").string(), ""}, env) ==
        std::vector<std::string>{"prod", "staging-1"});
  CHECK(fluxop::kube::context_names({}, empty_environment(dir)).empty());
}

TEST_CASE("kubeconfig: exec plugins, tokenFile, basic auth, unsupported fields") {
  TempDir dir;
  dir.write("config", R"(current-context: exec
clusters: [{name: k, cluster: {server: "http://127.0.0.1:8080", tls-server-name: other}},
           {name: plain, cluster: {server: "http://127.0.0.1:8080"}}]
users:
- name: exec
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/plugin
      args: [get-token, --verbose]
      env: [{name: REGION, value: eu}]
      provideClusterInfo: true
      interactiveMode: Never
- name: old
  user: {exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}}
- name: file
  user: {tokenFile: token, username: u, password: p}
- name: provider
  user: {auth-provider: {name: gcp}}
contexts:
- {name: exec, context: {cluster: plain, user: exec}}
- {name: old, context: {cluster: plain, user: old}}
- {name: file, context: {cluster: plain, user: file}}
- {name: provider, context: {cluster: plain, user: provider}}
- {name: sni, context: {cluster: k}}
)");
  std::string file = (dir.path() / "config").string();
  Environment env = empty_environment(dir);
  ClusterAccess access = load_cluster_access({file, ""}, env);
  REQUIRE(access.exec);
  CHECK(access.exec->api_version == "client.authentication.k8s.io/v1");
  CHECK(access.exec->command == (dir.path() / "bin/plugin").string());
  CHECK(access.exec->args == std::vector<std::string>{"get-token", "--verbose"});
  CHECK(access.exec->env == std::vector<std::string>{"REGION=eu"});
  CHECK(access.exec->provide_cluster_info);
  CHECK(access.exec->origin == file + ": users[0].user.exec");

  ClusterAccess with_file = load_cluster_access({file, "file"}, env);
  CHECK(with_file.token_file == (dir.path() / "token").string());
  CHECK(with_file.username == "u");
  CHECK(with_file.password == "p");

  CHECK_THROWS_WITH_AS(load_cluster_access({file, "old"}, env),
                       (file + ": users[1].user.exec.apiVersion: \"client.authentication.k8s.io/"
                               "v1alpha1\" is not client.authentication.k8s.io/v1 or v1beta1")
                           .c_str(),
                       Error);
  CHECK_THROWS_WITH_AS(
      load_cluster_access({file, "provider"}, env),
      (file + ": users[3].user.auth-provider: not supported by fluxopctl (use an exec plugin)")
          .c_str(),
      Error);
  CHECK_THROWS_AS(load_cluster_access({file, "sni"}, env), Error);
}

TEST_CASE("kubeconfig: in-cluster when there is no kubeconfig") {
  TempDir dir;
  Environment env = empty_environment(dir);
  CHECK_THROWS_WITH_AS(load_cluster_access({}, env),
                       "no cluster to talk to: no --kubeconfig, no kubeconfig file in $KUBECONFIG "
                       "or ~/.kube/config, and not in a cluster (KUBERNETES_SERVICE_HOST unset)",
                       Error);

  dir.write("serviceaccount/token", "sa-token\n");
  dir.write("serviceaccount/ca.crt", "CLUSTER CA");
  dir.write("serviceaccount/namespace", "flux-system");
  env.service_host = "10.96.0.1";
  env.service_port = "443";
  ClusterAccess access = load_cluster_access({}, env);
  CHECK(access.origin == "in-cluster");
  CHECK(access.server == "https://10.96.0.1:443");
  CHECK(access.token_file == (dir.path() / "serviceaccount/token").string());
  CHECK(access.ca_pem == "CLUSTER CA");
  CHECK(access.default_namespace == "flux-system");

  env.service_host = "fd00::1";
  CHECK(load_cluster_access({}, env).server == "https://[fd00::1]:443");

  // An empty $KUBECONFIG list falls back in-cluster too; a real one does not.
  env.kubeconfig = "";
  CHECK(load_cluster_access({}, env).origin == "in-cluster");
}

TEST_CASE(
    "kubeconfig: its files read bounded, never a FIFO or a device, a token ending its header") {
  TempDir dir;
  Environment env = empty_environment(dir);
  dir.write("pki/ca.crt", "CA PEM");
  REQUIRE(mkfifo((dir.path() / "fifo").c_str(), 0600) == 0);  // nobody writes: must not hang
  std::string fifo = (dir.path() / "fifo").string();
  CHECK_THROWS_WITH_AS(load_cluster_access({fifo, ""}, env),
                       ("--kubeconfig: " + fifo + ": not a regular file").c_str(), Error);
  dir.write("big", std::string((16 << 20) + 1, '#'));
  std::string big = (dir.path() / "big").string();
  CHECK_THROWS_WITH_AS(
      load_cluster_access({big, ""}, env),
      ("--kubeconfig: " + big + ": larger than 16 MiB, the most an input may be").c_str(), Error);

  std::string file = (dir.path() / "config").string();
  auto with_user = [&](const std::string& user) {
    dir.write("config", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://h"}}]
users: [{name: u, user: )" + user +
                            R"(}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
  };
  with_user(R"({client-certificate: /dev/zero, client-key: pki/ca.crt})");
  CHECK_THROWS_WITH_AS(
      load_cluster_access({file, ""}, env),
      (file + ": users[0].user.client-certificate: /dev/zero: not a regular file").c_str(), Error);
  dir.write("pki/huge.key", std::string((1 << 20) + 1, 'k'));
  with_user(R"({client-certificate: pki/ca.crt, client-key: pki/huge.key})");
  CHECK_THROWS_WITH_AS(
      load_cluster_access({file, ""}, env),
      (file + ": users[0].user.client-key: " + (dir.path() / "pki/huge.key").string() +
       ": larger than 1 MiB, the most an input may be")
          .c_str(),
      Error);
  with_user(R"({token: "secret\r\nX-Injected: 1"})");
  CHECK_THROWS_WITH_AS(load_cluster_access({file, ""}, env),
                       (file + ": users[0].user.token: holds a line break").c_str(), Error);
  with_user(R"({token: "secret\0"})");
  CHECK_THROWS_WITH_AS(load_cluster_access({file, ""}, env),
                       (file + ": users[0].user.token: holds a control character").c_str(), Error);
}

TEST_CASE("kubeconfig: the user's impersonation (as, as-groups, as-uid, as-user-extra)") {
  TempDir dir;
  dir.write("config", R"(apiVersion: v1
kind: Config
clusters:
- {name: c, cluster: {server: "https://127.0.0.1:6443"}}
users:
- name: viewer
  user:
    token: t
    as: jane
    as-groups: [dev, ops]
    as-uid: "42"
    as-user-extra: {scopes: [view, "a b"]}
- {name: groups-only, user: {as-groups: [dev]}}
- {name: line-break, user: {as: "jane\r\nX-Evil: 1"}}
- {name: not-a-list, user: {as: jane, as-groups: dev}}
contexts:
- {name: viewer, context: {cluster: c, user: viewer}}
- {name: groups-only, context: {cluster: c, user: groups-only}}
- {name: line-break, context: {cluster: c, user: line-break}}
- {name: not-a-list, context: {cluster: c, user: not-a-list}}
)");
  std::string file = (dir.path() / "config").string();
  Environment env = empty_environment(dir);
  ClusterAccess access = load_cluster_access({file, "viewer"}, env);
  CHECK(access.impersonate.user == "jane");
  CHECK(access.impersonate.groups == std::vector<std::string>{"dev", "ops"});
  CHECK(impersonation_headers(access.impersonate, access.impersonate_origin) ==
        std::vector<std::string>{"Impersonate-User: jane", "Impersonate-Group: dev",
                                 "Impersonate-Group: ops", "Impersonate-Uid: 42",
                                 "Impersonate-Extra-scopes: view",
                                 "Impersonate-Extra-scopes: a b"});

  CHECK_THROWS_WITH_AS(
      load_cluster_access({file, "groups-only"}, env),
      (file + ": users[1].user: groups to impersonate without a user to impersonate").c_str(),
      Error);
  CHECK_THROWS_WITH_AS(load_cluster_access({file, "line-break"}, env),
                       (file + ": users[2].user: Impersonate-User: holds a line break").c_str(),
                       Error);
  CHECK_THROWS_WITH_AS(load_cluster_access({file, "not-a-list"}, env),
                       (file + ": users[3].user.as-groups: not a list").c_str(), Error);
}

TEST_CASE("kubeconfig: the cluster's proxy-url, an http, https or socks5 URL") {
  TempDir dir;
  dir.write("config", R"(apiVersion: v1
kind: Config
clusters:
- {name: proxied, cluster: {server: "https://10.0.0.1:6443", proxy-url: "http://proxy:3128"}}
- {name: ftp, cluster: {server: "https://10.0.0.1:6443", proxy-url: "ftp://u:secret@proxy"}}
contexts:
- {name: proxied, context: {cluster: proxied}}
- {name: ftp, context: {cluster: ftp}}
)");
  std::string file = (dir.path() / "config").string();
  Environment env = empty_environment(dir);
  CHECK(load_cluster_access({file, "proxied"}, env).proxy_url == "http://proxy:3128");
  // The URL is not quoted: it may hold the proxy's password.
  CHECK_THROWS_WITH_AS(
      load_cluster_access({file, "ftp"}, env),
      (file + ": clusters[1].cluster.proxy-url: not an http://, https:// or socks5:// URL").c_str(),
      Error);
}
