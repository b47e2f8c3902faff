// The flags of the commands that reach registries (pull, push, build, apply,
// diff), and the artifacts they describe.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/request_timeout_flag.h"
#include "core/reconcile/artifacts.h"

namespace fluxop::cli {

using RegistryFlags = reconcile::RegistrySettings;

// --insecure-registry, --ca-file, --certs-dir, --request-timeout, and --offline
// when `offline` is set.
void add_registry_flags(CLI::App& command, RegistryFlags& flags, bool offline);

// --verify and who must have signed the artifact (--certificate-identity-regexp,
// --certificate-oidc-issuer, or --key; --trusted-root): pull, build, apply,
// images, mirror.
void add_artifact_verify_flags(CLI::App& command, RegistryFlags& flags);

// fluxopctl's artifact cache: oci/ under the user's cache root (core/cache_root.h).
std::string artifact_cache_root();

// The artifact cache and the registries the flags reach; what was pulled is
// said on stderr.
reconcile::RegistryArtifacts registry_artifacts(const RegistryFlags& flags);

}  // namespace fluxop::cli
