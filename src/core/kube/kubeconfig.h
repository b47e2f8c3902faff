// Finding the cluster and the credentials as kubectl does: --kubeconfig FILE,
// else the files in $KUBECONFIG merged (the first file to set a name or
// current-context wins), else ~/.kube/config, else the pod's service account
// (in-cluster). Errors name the file and field; credentials never appear in
// them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace fluxop::kube {

inline constexpr std::string_view kServiceAccountDir =
    "/var/run/secrets/kubernetes.io/serviceaccount";

// The files read through read_input_file (a regular file, so that a FIFO
// cannot hang nor /dev/zero fill memory), at most this large: a kubeconfig...
inline constexpr std::size_t kMaxKubeconfigBytes = std::size_t{16} << 20;
// ...and a file it names (a certificate, a key, a token file).
inline constexpr std::size_t kMaxCredentialFileBytes = std::size_t{1} << 20;

// What makes `token` unfit for an Authorization header ("holds a line
// break"), empty when nothing: a CR or LF would end the header and start one
// of the token's making.
std::string token_problem(std::string_view token);

// What kubectl reads from the environment, in one place so that tests give
// their own.
struct Environment {
  std::optional<std::string> kubeconfig;  // $KUBECONFIG when set
  std::string home;                       // $HOME
  std::string service_host;               // $KUBERNETES_SERVICE_HOST
  std::string service_port;               // $KUBERNETES_SERVICE_PORT
  std::string service_account_dir = std::string(kServiceAccountDir);

  static Environment current();
};

struct KubeconfigFlags {
  std::string kubeconfig;  // --kubeconfig FILE: that one file
  std::string context;     // --context NAME: instead of current-context
};

// A credential plugin (users[].user.exec), run for a token or a client
// certificate as kubectl runs it.
struct ExecPlugin {
  std::string api_version;  // client.authentication.k8s.io/v1 or /v1beta1
  std::string command;
  std::vector<std::string> args;
  std::vector<std::string> env;  // NAME=value
  bool provide_cluster_info = false;
  std::string install_hint;
  std::string origin;  // "FILE: users[N].user.exec", for errors
};

// Whom the requests act as (kubectl --as, --as-group; the kubeconfig user's
// as, as-groups, as-uid, as-user-extra): the Impersonate-* headers, which
// the API server honours when the caller may impersonate.
struct Impersonation {
  std::string user;
  std::vector<std::string> groups;
  std::string uid;
  std::vector<std::pair<std::string, std::vector<std::string>>> extra;

  bool empty() const { return user.empty() && groups.empty() && uid.empty() && extra.empty(); }
};

// The Impersonate-* headers of `who`; throws fluxop::Error naming `origin`
// (a flag or the kubeconfig's field) when groups, a uid or extras come
// without a user, or a value holds a control character.
std::vector<std::string> impersonation_headers(const Impersonation& who, std::string_view origin);

// How to reach one cluster and authenticate to it.
struct ClusterAccess {
  std::string origin;   // the kubeconfig file that named the context, or "in-cluster"
  std::string context;  // empty in-cluster
  std::string server;   // https://HOST[:PORT][/PATH]
  std::string ca_pem;   // the CAs to trust; the system's when empty
  bool insecure_skip_tls_verify = false;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string token;       // a bearer token, or
  std::string token_file;  // a file holding one, read again when it changes
  std::string username;    // HTTP Basic, with
  std::string password;
  std::optional<ExecPlugin> exec;
  Impersonation impersonate;
  std::string impersonate_origin;  // "FILE: users[N].user" or the flags, for errors
  // The proxy the kubeconfig's cluster names (proxy-url); empty: the
  // environment's (HTTPS_PROXY, NO_PROXY), as kubectl.
  std::string proxy_url;
  std::string default_namespace = "default";  // the context's namespace
};

// No kubeconfig and not in a cluster: nothing says which cluster to reach.
class NoClusterConfigured : public Error {
 public:
  using Error::Error;
};

// The cluster access kubectl would use with these flags in this environment.
// Throws fluxop::Error naming the file and field on a bad or missing entry,
// and NoClusterConfigured when there is no kubeconfig and no in-cluster
// service account.
ClusterAccess load_cluster_access(const KubeconfigFlags& flags,
                                  const Environment& env = Environment::current());

// The names of the contexts of the kubeconfig (the files merged, as above),
// sorted; none without a kubeconfig. Throws fluxop::Error as
// load_cluster_access does on a file it cannot read.
std::vector<std::string> context_names(const KubeconfigFlags& flags,
                                       const Environment& env = Environment::current());

// In-cluster access from the service account directory; nullopt when not in
// a cluster (KUBERNETES_SERVICE_HOST or _PORT unset, or no token file).
std::optional<ClusterAccess> in_cluster_access(const Environment& env);

}  // namespace fluxop::kube
