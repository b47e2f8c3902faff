// Where `fluxopctl build` reads the Flux distribution from. In order: the
// --distribution-artifact flag, the instance's .spec.distribution.artifact,
// FLUXOPCTL_DISTRIBUTION, the default artifact as `fluxopctl pull` last
// fetched it, fluxopctl's cache directory (when it exists; scripts/setup
// seeds it). oci:// artifacts are handed to a resolver that pulls them and
// opens what it pulled; this module itself never reaches the network.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/distribution/distribution.h"
#include "core/file_system.h"
#include "core/instance/instance.h"

namespace fluxop::distribution {

// Where the Flux Operator publishes the distribution (its CLI's default).
inline constexpr std::string_view kDefaultArtifact =
    "oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests:latest";

// What locate() reads besides its arguments, apart so tests can set it.
struct Environment {
  std::string cache_root;    // fluxopctl's, from XDG_CACHE_HOME or HOME (core/cache_root.h)
  std::string distribution;  // FLUXOPCTL_DISTRIBUTION
  // Where directories are read from.
  std::shared_ptr<const FileSystem> files = shared_disk();

  static Environment current();
};

// <cache_root>/distribution; empty when there is no cache root.
std::string cache_dir(const Environment& env);

// The distribution of an oci:// URL, pulled; `origin` names where the URL
// was given, for errors.
using OciResolver = std::function<Distribution(std::string_view url, std::string_view origin)>;

// Whether an artifact reference is an oci:// URL (pulled, not read from disk).
bool is_oci_url(std::string_view artifact);

// The directory an artifact reference names: DIR or file://DIR. Other URLs,
// oci:// included, throw fluxop::Error starting with `origin`.
std::string artifact_dir(std::string_view artifact, std::string_view origin);

// The distribution an artifact reference names: a directory of `files` as
// above, or an oci:// URL through `oci`.
Distribution open_artifact(std::string_view artifact, std::string_view origin,
                           const std::shared_ptr<const FileSystem>& files,
                           const OciResolver& oci = {});

// The default artifact (kDefaultArtifact) as last pulled, from the
// cache alone; nothing when it was never pulled.
using PulledDefault = std::function<std::optional<Distribution>()>;

// An artifact reference and where it was given (for errors).
struct ArtifactSource {
  std::string url;
  std::string origin;
};

// The first of the flag, the instance's .spec.distribution.artifact and
// FLUXOPCTL_DISTRIBUTION that is given; nullopt when none is.
std::optional<ArtifactSource> given_artifact(std::string_view flag,
                                             const instance::FluxInstance& flux,
                                             const Environment& env);

// Opens the distribution the first source above names (`flag` empty when the
// flag is not given). Throws fluxop::Error naming the source when it is not a
// distribution, or saying how to give one when there is none.
Distribution locate(std::string_view flag, const instance::FluxInstance& flux,
                    const Environment& env, const OciResolver& oci = {},
                    const PulledDefault& pulled_default = {});

}  // namespace fluxop::distribution
