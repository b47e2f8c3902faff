// The Secrets a FluxInstance names (.spec.sync.pullSecret,
// .spec.distribution.imagePullSecret and .artifactPullSecret) and the keys
// each is read for, as the Flux controllers, the kubelet and the operator
// read them; and the Secret object `fluxopctl create secret` makes, as the
// upstream CLI's `create secret` makes it. One table of kinds serves both.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/instance/instance.h"
#include "core/kube/cluster.h"

namespace fluxop::reconcile {

// The kinds of `create secret KIND`.
enum class SecretKind { basic_auth, ssh, githubapp, registry, tls, proxy, sops };

struct SecretKindInfo {
  SecretKind kind;
  std::string_view name;  // "basic-auth", as the command spells it
  std::string_view use;   // what Flux reads it for, for the help
};

// Every kind, in the order of the help.
const std::vector<SecretKindInfo>& secret_kinds();

// The Secret `ns`/`name` holding `string_data` (key: value), with its
// labels and annotations, of the type Flux expects of `kind` (tls:
// kubernetes.io/tls with a certificate and key, else Opaque). Keys and
// members are sorted, as the upstream CLI prints them. A value that is not
// UTF-8 is kept byte for byte under data (base64), the rest under
// stringData.
nlohmann::ordered_json secret_object(SecretKind kind, const std::string& name,
                                     const std::string& ns,
                                     const std::map<std::string, std::string>& string_data,
                                     const std::map<std::string, std::string>& labels,
                                     const std::map<std::string, std::string>& annotations);

// What `create secret KIND` is given, as its flags, files and standard input
// hold it; a kind reads its own members.
struct SecretInput {
  std::string username, password;           // basic-auth, registry, proxy; ssh: password
  std::string server;                       // registry
  std::string address;                      // proxy: a URL
  std::string identity, known_hosts;        // ssh
  std::optional<std::string> identity_pub;  // ssh, when given
  std::string app_id, installation_owner, installation_id, app_private_key, app_base_url;
  std::optional<std::string> tls_crt, tls_key;  // tls: PEM, when given
  std::string ca_crt;                           // tls
  struct SopsKey {
    std::string key;
    bool age = true;  // else GPG
  };
  std::vector<SopsKey> sops_keys;
};

// The keys and values of a `kind` Secret from `input`, as the upstream CLI
// lays them out (basic-auth: username, password; registry:
// .dockerconfigjson; ssh: identity, identity.pub, known_hosts, password;
// githubapp: githubApp*; tls: tls.crt, tls.key, ca.crt; proxy: address,
// username, password; sops: one key each, sops_key_name), optional members
// left out when empty. Throws fluxop::Error when tls's certificate and key
// are not a pair (the key the certificate's, as the TLS stack that loads them
// asks).
std::map<std::string, std::string> secret_data(SecretKind kind, const SecretInput& input);

// The key a sops kind stores one Age (".agekey") or GPG (".asc") private
// key under: the Adler-32 checksum of the key, as the upstream CLI and the
// flux CLI name it, so that the same key is stored once.
std::string sops_key_name(std::string_view key, bool age);

// The docker config JSON of a registry kind: one entry for `server`.
std::string docker_config_json(const std::string& server, const std::string& username,
                               const std::string& password);

// Server-side applies `secret` (a secret_object: its stringData sent as
// data), immutable when asked. One that exists immutable or of another type
// cannot change in place: it is deleted first. Returns "created" or
// "configured".
std::string apply_secret(kube::Cluster& cluster, const nlohmann::ordered_json& secret,
                         bool immutable);

// A Secret the instance names: where, and the sets of keys any one of
// which is enough for what reads it.
struct NamedSecret {
  std::string field;  // ".spec.sync.pullSecret"
  std::string name;
  std::string reader;  // "the GitRepository flux-system"
  std::vector<std::vector<std::string>> key_sets;
  std::string type;  // the type it must have, or "" for any
};

// The Secrets `flux` names, in the order of its fields.
std::vector<NamedSecret> named_secrets(const instance::FluxInstance& flux);

// What is wrong with `live` (the Secret as read, nullopt when it does not
// exist) for `secret`; nullopt when it is fine. Never quotes a value.
std::optional<std::string> secret_problem(const NamedSecret& secret,
                                          const std::optional<nlohmann::json>& live);

}  // namespace fluxop::reconcile
