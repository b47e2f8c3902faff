#include "cli/registry_flags.h"
#include "cli/notice.h"

#include <iostream>

#include "core/cache_root.h"

namespace fluxop::cli {

void add_registry_flags(CLI::App& command, RegistryFlags& flags, bool offline) {
  command
      .add_option("--insecure-registry", flags.insecure_registries,
                  "Reach this registry over plain HTTP (repeatable; loopback registries always "
                  "may)")
      ->option_text("HOST[:PORT]")
      ->allow_extra_args(false);
  add_request_timeout_flag(command, flags.request_timeout);
  if (offline) {
    command.add_flag("--offline", flags.offline,
                     "Use only fluxopctl's cache; a tag resolves to the digest it last had");
  }
}

std::string artifact_cache_root() { return oci::ArtifactCache::default_root(user_cache_root()); }

reconcile::RegistryArtifacts registry_artifacts(const RegistryFlags& flags) {
  return reconcile::RegistryArtifacts(flags, artifact_cache_root(), print_notice);
}

}  // namespace fluxop::cli
