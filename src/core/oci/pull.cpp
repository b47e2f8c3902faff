#include "core/oci/pull.h"

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.h"
#include "core/file.h"

namespace fluxop::oci {

namespace {

namespace fs = std::filesystem;

// The layer holding the content: Flux's content media type, or another
// tar+gzip layer type when an artifact was pushed by other tools.
const Descriptor& content_layer(const Manifest& manifest, const Reference& ref) {
  for (const Descriptor& layer : manifest.layers) {
    std::string_view type = layer.media_type;
    if (type.ends_with("tar+gzip") || type.ends_with("tar.gzip") || type.ends_with(".tar.gz"))
      return layer;
  }
  throw Error(ref.str() + ": manifest " + manifest.digest + " has no tar+gzip layer");
}

// Downloads and extracts the layer into `dir` (content/, manifest.json).
void fill_entry(RegistryClient& client, const Reference& ref, const Manifest& manifest,
                const PullOptions& options, const std::string& dir) {
  const Descriptor& layer = content_layer(manifest, ref);
  std::string blob = dir + "/layer.tar.gz";
  client.fetch_blob(ref, layer, blob, options.max_layer_bytes);
  fs::create_directory(dir + "/content");
  extract_archive(blob, dir + "/content", "blob " + layer.digest, options.limits);
  fs::remove(blob);
  write_file(dir + "/manifest.json", manifest.bytes);
}

PullResult from_cache(const Reference& ref, const CachedArtifact& artifact) {
  return PullResult{ref, artifact, manifest_annotations(artifact), false, "", 0};
}

// The intact cached entry `digest`, pinned, or nothing. A damaged entry (a
// file changed, truncated or missing since it was pulled) is never used:
// offline it is an error, online it is discarded (`discard` does it, with the
// lock held) to be pulled again, and `warning` says so.
std::optional<CachedArtifact> intact(ArtifactCache& cache, const std::string& digest, bool offline,
                                     std::string& warning,
                                     const std::function<void(const CachedArtifact&)>& discard) {
  std::optional<CachedArtifact> artifact = cache.open(digest);
  if (!artifact) return std::nullopt;
  std::string problem = cache.verify(*artifact);
  if (problem.empty()) return artifact;
  std::string damaged = "the cached entry " + artifact->dir + " is damaged (" + problem + ")";
  if (offline) throw Error(damaged + "; pull it again without --offline");
  discard(*artifact);
  warning = damaged + "; pulled again";
  return std::nullopt;
}

PullResult pull_offline(ArtifactCache& cache, const Reference& ref) {
  std::string hint =
      " (--offline: run `fluxopctl pull " + ref.str() + "` while the registry is reachable)";
  // pull() has looked for a digest already.
  std::optional<RefRecord> record = ref.digest.empty() ? cache.resolve(ref) : std::nullopt;
  std::string unused;
  std::optional<CachedArtifact> artifact =
      record ? intact(cache, record->digest, true, unused, [](const CachedArtifact&) {})
             : std::nullopt;
  if (!artifact) throw Error(ref.str() + ": not in the cache " + cache.root() + hint);
  PullResult result = from_cache(ref, *artifact);
  result.warning = "offline: " + ref.str() + " resolved to " + record->digest +
                   " as last pulled at " + record->pulled;
  return result;
}

}  // namespace

std::map<std::string, std::string> manifest_annotations(const CachedArtifact& artifact) {
  std::map<std::string, std::string> annotations;
  nlohmann::json manifest =
      nlohmann::json::parse(read_file_if_exists(artifact.manifest()).value_or(""), nullptr, false);
  if (!manifest.is_object()) return annotations;
  auto found = manifest.find("annotations");
  if (found == manifest.end() || !found->is_object()) return annotations;
  for (const auto& [key, value] : found->items()) {
    if (value.is_string()) annotations[key] = value;
  }
  return annotations;
}

PullResult pull(ArtifactCache& cache, const Reference& ref, const PullOptions& options) {
  std::string warning;
  // A digest names immutable content: the cache answers without the registry.
  if (!ref.digest.empty()) {
    auto discard_locked = [&](const CachedArtifact& damaged) {
      std::unique_ptr<CacheLock> held = cache.lock();
      cache.discard(damaged);
    };
    if (std::optional<CachedArtifact> artifact =
            intact(cache, ref.digest, options.offline, warning, discard_locked)) {
      if (!cache.resolve(ref)) {
        std::unique_ptr<CacheLock> held = cache.lock();
        cache.record(ref, ref.digest);
      }
      return from_cache(ref, *artifact);
    }
  }
  if (options.offline) return pull_offline(cache, ref);

  RegistryClient client(options.registry);
  Manifest manifest = client.fetch_manifest(ref);
  std::unique_ptr<CacheLock> held = cache.lock();
  std::optional<CachedArtifact> artifact =
      intact(cache, manifest.digest, false, warning,
             [&](const CachedArtifact& damaged) { cache.discard(damaged); });
  bool downloaded = !artifact;
  if (downloaded) {
    cache.add(manifest.digest,
              [&](const std::string& dir) { fill_entry(client, ref, manifest, options, dir); });
    artifact = cache.open(manifest.digest);
    if (!artifact) throw Error(cache.root() + ": the entry " + manifest.digest + " vanished");
  }
  cache.record(ref, manifest.digest);
  return PullResult{ref,        *artifact, manifest.annotations,
                    downloaded, warning,   client.requests_sent()};
}

}  // namespace fluxop::oci
