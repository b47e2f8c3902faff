#include "core/oci/registry_access.h"

#include "core/net/trust.h"

namespace fluxop::oci {

RegistryOptions registry_options(
    const RegistryAccess& access,
    const std::function<Credential(std::string_view registry)>& credentials) {
  RegistryOptions options;
  options.insecure_registries = access.insecure_registries;
  options.credentials = credentials ? credentials : default_docker_credentials();
  options.http.request_timeout = access.request_timeout;
  options.http.host_trust = net::registry_trust(access.ca_pem, access.certs_dir);
  std::string certs_dir =
      "a certificates directory (--certs-dir, " + std::string(net::kCertsDirEnvironment) + ")";
  options.http.untrusted_hint =
      "add its CA with --ca-file, or as HOST[:PORT]/ca.crt in " + certs_dir;
  options.http.client_certificate_hint =
      "put it as HOST[:PORT]/client.cert with its client.key in " + certs_dir;
  return options;
}

}  // namespace fluxop::oci
