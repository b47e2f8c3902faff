// Publishing a distribution directory as an OCI artifact, laid out as the
// Flux Operator publishes flux-operator-manifests (what `flux push artifact`
// makes): one tar+gzip content layer of the directory, a Flux config
// blob, and the org.opencontainers.image.{created,source,revision}
// annotations. This is how an air-gapped site mirrors the distribution.
#pragma once

#include <string>

#include "core/oci/registry.h"

namespace fluxop::oci {

inline constexpr std::string_view kFluxContentLayer =
    "application/vnd.cncf.flux.content.v1.tar+gzip";
inline constexpr std::string_view kFluxConfig = "application/vnd.cncf.flux.config.v1+json";

struct PushOptions {
  RegistryOptions registry;
  std::string source;    // annotation; default file://<absolute dir>
  std::string revision;  // annotation; default local@<digest of the uncompressed layer>
  std::string created;   // annotation, RFC 3339; default SOURCE_DATE_EPOCH, else now
  // Pack the artifact and say its digest, but send nothing to the registry.
  bool dry_run = false;
};

struct PushResult {
  std::string digest;  // of the manifest
  std::uint64_t layer_size = 0;
  bool layer_uploaded = false;  // false: the registry had it (or a dry run)
};

// Pushes `dir` (holding flux/, and flux-images/, flux-vex/ or anything else
// the artifact carries: every entry but hidden ones) under the reference's
// tag.
PushResult push_distribution(const std::string& dir, const Reference& ref,
                             const PushOptions& options);

}  // namespace fluxop::oci
