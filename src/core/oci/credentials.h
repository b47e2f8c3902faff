// Registry credentials as Docker and crane find them: a Docker config file
// (`auths` entries with `auth`, username/password or an identity token),
// `credHelpers` per registry and a default `credsStore`, both answered by
// `docker-credential-NAME get`. The same format is the content of a
// Kubernetes kubernetes.io/dockerconfigjson secret.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace fluxop::oci {

struct Credential {
  std::string username;
  std::string password;
  std::string identity_token;  // a refresh token for the registry's token service

  bool empty() const { return username.empty() && password.empty() && identity_token.empty(); }
};

class DockerConfig {
 public:
  // $DOCKER_CONFIG/config.json, else ~/.docker/config.json; empty when missing.
  static DockerConfig load_default();
  // A config's text; `origin` names it in errors.
  static DockerConfig parse(std::string_view json, const std::string& origin);

  // The credential for HOST[:PORT]: its credHelpers entry, else the credsStore,
  // else the auths entry; empty when there is none. Throws fluxop::Error when
  // a helper fails for another reason than "not found".
  Credential lookup(std::string_view registry) const;

 private:
  std::string origin_;
  std::map<std::string, Credential> auths_;  // keyed by HOST[:PORT]
  std::string creds_store_;
  std::map<std::string, std::string> cred_helpers_;
};

// Looks credentials up in the default Docker config, read on first use.
std::function<Credential(std::string_view registry)> default_docker_credentials();

// Runs `docker-credential-NAME get` for `registry`.
Credential run_credential_helper(const std::string& name, std::string_view registry);

}  // namespace fluxop::oci
