// How registries are reached, as the flags of every command that reaches one
// (pull, build, apply, push, mirror, verify) say it, and the client options
// that follow from them.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/oci/credentials.h"
#include "core/oci/registry.h"

namespace fluxop::oci {

struct RegistryAccess {
  std::vector<std::string> insecure_registries;  // reached over plain HTTP
  std::chrono::milliseconds request_timeout{30'000};
  std::string ca_pem;     // CAs trusted beside the system's (--ca-file), checked
  std::string certs_dir;  // a certs.d directory (net/trust.h); none when empty
};

// The client options of `access`: its trust (the CAs, the certs.d
// directory, with hints naming the flags that add to them), and
// `credentials`, or the Docker config's and credential helpers' when unset.
RegistryOptions registry_options(
    const RegistryAccess& access,
    const std::function<Credential(std::string_view registry)>& credentials = {});

}  // namespace fluxop::oci
