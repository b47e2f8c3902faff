#include "core/distribution/locate.h"

#include <cstdlib>
#include <filesystem>

#include "core/cache_root.h"
#include "core/error.h"

namespace fluxop::distribution {
namespace fs = std::filesystem;

namespace {

// "oci" for "oci://host/repo", empty when `artifact` has no URL scheme.
std::string_view url_scheme(std::string_view artifact) {
  std::size_t end = artifact.find("://");
  if (end == std::string_view::npos || end == 0) return {};
  for (char c : artifact.substr(0, end)) {
    bool scheme_char = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '+' || c == '-' || c == '.';
    if (!scheme_char) return {};
  }
  return artifact.substr(0, end);
}

// Opens the distribution at `dir` of `files`, prefixing errors with where
// `dir` came from.
Distribution open(const std::string& dir, std::string_view origin,
                  const std::shared_ptr<const FileSystem>& files) {
  try {
    return directory_distribution(dir, files);
  } catch (const Error& e) {
    if (origin.empty()) throw;
    throw Error(std::string(origin) + ": " + e.what());
  }
}

}  // namespace

Environment Environment::current() {
  const char* distribution = std::getenv("FLUXOPCTL_DISTRIBUTION");
  return {user_cache_root(), distribution ? distribution : ""};
}

std::string cache_dir(const Environment& env) {
  return env.cache_root.empty() ? "" : (fs::path(env.cache_root) / "distribution").string();
}

bool is_oci_url(std::string_view artifact) { return url_scheme(artifact) == "oci"; }

std::string artifact_dir(std::string_view artifact, std::string_view origin) {
  std::string_view scheme = url_scheme(artifact);
  if (scheme.empty()) return std::string(artifact);
  if (scheme == "file") return std::string(artifact.substr(7));
  std::string what = std::string(origin) + ": " + std::string(artifact) + ": ";
  if (scheme == "oci")
    throw Error(what + "oci:// artifacts cannot be read here; give a local directory");
  throw Error(what + "unsupported URL scheme (expected a directory, file://DIR or oci://)");
}

Distribution open_artifact(std::string_view artifact, std::string_view origin,
                           const std::shared_ptr<const FileSystem>& files, const OciResolver& oci) {
  if (oci && is_oci_url(artifact)) return oci(artifact, origin);
  return open(artifact_dir(artifact, origin), origin, files);
}

std::optional<ArtifactSource> given_artifact(std::string_view flag,
                                             const instance::FluxInstance& flux,
                                             const Environment& env) {
  if (!flag.empty()) return ArtifactSource{std::string(flag), "--distribution-artifact"};
  if (!flux.distribution.artifact.empty())
    return ArtifactSource{flux.distribution.artifact, flux.file + ": .spec.distribution.artifact"};
  if (!env.distribution.empty()) return ArtifactSource{env.distribution, "FLUXOPCTL_DISTRIBUTION"};
  return std::nullopt;
}

Distribution locate(std::string_view flag, const instance::FluxInstance& flux,
                    const Environment& env, const OciResolver& oci,
                    const PulledDefault& pulled_default) {
  if (std::optional<ArtifactSource> given = given_artifact(flag, flux, env))
    return open_artifact(given->url, given->origin, env.files, oci);
  if (pulled_default) {
    if (std::optional<Distribution> pulled = pulled_default()) return std::move(*pulled);
  }
  std::string cache = cache_dir(env);
  if (!cache.empty() && env.files->kind(cache) == FileSystem::Kind::Directory)
    return open(cache, "", env.files);
  throw Error("no Flux distribution: run `fluxopctl pull` to fetch the default one (" +
              std::string(kDefaultArtifact) +
              "), or give one with --distribution-artifact or FLUXOPCTL_DISTRIBUTION (a "
              "directory or an oci:// URL)");
}

}  // namespace fluxop::distribution
