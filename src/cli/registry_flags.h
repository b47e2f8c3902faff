// The flags of the commands that reach registries (pull, push, build), and
// pulling an oci:// URL into fluxopctl's cache for them.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/request_timeout_flag.h"
#include "core/oci/cache.h"
#include "core/oci/pull.h"

namespace fluxop::cli {

struct RegistryFlags {
  std::vector<std::string> insecure_registries;
  bool offline = false;
  std::chrono::milliseconds request_timeout = kDefaultRequestTimeout;
  // Registry credentials; the Docker config's when unset.
  std::function<oci::Credential(std::string_view registry)> credentials;
};

// --insecure-registry, --request-timeout, and --offline when `offline` is set.
void add_registry_flags(CLI::App& command, RegistryFlags& flags, bool offline);

oci::RegistryOptions registry_options(const RegistryFlags& flags);

// $XDG_CACHE_HOME/fluxopctl/oci.
oci::ArtifactCache default_artifact_cache();

// distribution::kDefaultArtifact from the cache alone, as `fluxopctl pull` last
// fetched it; nothing when it was never pulled (or there is no cache).
std::optional<oci::PullResult> pulled_default_artifact();

// Pulls `url` (errors prefixed with `origin` when given), says on stderr what
// was downloaded or resolved offline, and returns the result.
// Its warning and the digest pulled go to `notice`, else to stderr.
oci::PullResult pull_url(std::string_view url, std::string_view origin, const RegistryFlags& flags,
                         const std::function<void(const std::string&)>& notice = {});

}  // namespace fluxop::cli
