// Where `fluxopctl build` reads the Flux distribution from. In order: the
// --distribution-artifact flag, the instance's .spec.distribution.artifact,
// FLUXOPCTL_DISTRIBUTION, the default artifact as `fluxopctl pull` last
// fetched it, fluxopctl's cache directory (when it exists; scripts/setup
// seeds it). oci:// artifacts are handed to a resolver that pulls them and
// opens what it pulled; this module itself never reaches the network.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/distribution/distribution.h"
#include "core/instance/instance.h"

namespace fluxop::distribution {

// Where the Flux Operator publishes the distribution (its CLI's default).
inline constexpr std::string_view kDefaultArtifact =
    "oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests:latest";

// The environment variables locate() reads, apart so tests can set them.
struct Environment {
  std::string xdg_cache_home;  // XDG_CACHE_HOME
  std::string home;            // HOME
  std::string distribution;    // FLUXOPCTL_DISTRIBUTION

  static Environment current();
};

// $XDG_CACHE_HOME/fluxopctl/distribution, or ~/.cache/fluxopctl/distribution
// when XDG_CACHE_HOME is unset or relative (the XDG spec ignores relative
// values); empty when HOME is unset too.
std::string cache_dir(const Environment& env);

// The distribution of an oci:// URL, pulled; `origin` names where the URL
// was given, for errors.
using OciResolver = std::function<Distribution(std::string_view url, std::string_view origin)>;

// The directory an artifact reference names: DIR or file://DIR. Other URLs,
// oci:// included, throw fluxop::Error starting with `origin`.
std::string artifact_dir(std::string_view artifact, std::string_view origin);

// The distribution an artifact reference names: a directory as above, or an
// oci:// URL through `oci`.
Distribution open_artifact(std::string_view artifact, std::string_view origin,
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
