#include "core/oci/pull.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.h"
#include "core/file.h"
#include "core/oci/layer_files.h"

namespace fluxop::oci {

namespace {

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

// Downloads and indexes the layer into `dir` (layer, layer.index,
// layer.kept, manifest.json); returns the index and the files kept.
CacheIndexed fill_entry(RegistryClient& client, const Reference& ref, const Manifest& manifest,
                        const PullOptions& options, const std::string& dir, const CacheSeal& seal) {
  const Descriptor& descriptor = content_layer(manifest, ref);
  // In memory, indexed, then written in one write: ext4 charged a
  // millisecond for the hundred writes of the download's chunks.
  std::string blob = client.fetch_blob_bytes(ref, descriptor, options.limits.max_layer_bytes);
  CacheIndexed indexed =
      index_for_cache(blob, descriptor.digest, "blob " + descriptor.digest, options.limits);
  write_new_file(dir + "/layer", blob);
  if (!indexed.kept_encoding.empty()) write_new_file(dir + "/layer.kept", indexed.kept_encoding);
  write_new_file(dir + "/layer.index", indexed.index.encode(seal));
  write_new_file(dir + "/manifest.json", manifest.bytes);
  return indexed;
}

// A cached entry, pinned, with its layer read and verified.
struct Intact {
  CachedArtifact artifact;
  std::shared_ptr<const Layer> layer;
};

PullResult from_cache(const ArtifactCache& cache, const Reference& ref, Intact entry) {
  std::map<std::string, std::string> annotations = manifest_annotations(cache, entry.artifact);
  return PullResult{
      ref, std::move(entry.artifact), std::move(entry.layer), std::move(annotations), false, "", 0};
}

// The intact cached entry `digest`, pinned, or nothing. A damaged entry (a
// file changed, truncated or missing since it was pulled) is never used:
// offline it is an error, online it is discarded (`discard` does it, with the
// lock held) to be pulled again, and `warning` says so. Its layer's digest is
// checked by the first read of it, which removes the entry when it fails.
std::optional<Intact> intact(ArtifactCache& cache, const std::string& digest, bool offline,
                             std::string& warning,
                             const std::function<void(const CachedArtifact&)>& discard) {
  std::optional<CachedArtifact> artifact = cache.open(digest);
  if (!artifact) return std::nullopt;
  auto layer = std::make_shared<Layer>();
  std::string problem = cache.verify(*artifact, layer.get(), ArtifactCache::BlobCheck::when_read);
  if (problem.empty()) return Intact{*artifact, std::move(layer)};
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
  std::string untrusted;
  std::optional<RefRecord> record =
      ref.digest.empty() ? cache.resolve(ref, &untrusted) : std::nullopt;
  if (!untrusted.empty()) throw Error(ref.str() + ": " + untrusted + hint);
  std::string unused;
  std::optional<Intact> entry =
      record ? intact(cache, record->digest, true, unused, [](const CachedArtifact&) {})
             : std::nullopt;
  if (!entry) throw Error(ref.str() + ": not in the cache " + cache.root() + hint);
  PullResult result = from_cache(cache, ref, std::move(*entry));
  result.warning = "offline: " + ref.str() + " resolved to " + record->digest +
                   " as last pulled at " + record->pulled;
  return result;
}

}  // namespace

distribution::Distribution pulled_distribution(const PullResult& pulled) {
  return layer_distribution(pulled.layer, pulled.ref.pinned(pulled.artifact.digest));
}

std::map<std::string, std::string> manifest_annotations(const ArtifactCache& cache,
                                                        const CachedArtifact& artifact) {
  std::optional<std::string> manifest = cache.verified_manifest(artifact);
  if (!manifest) return {};
  try {
    return parse_manifest(std::move(*manifest), kOciManifest, artifact.manifest()).annotations;
  } catch (const Error&) {
    return {};
  }
}

PullResult pull(ArtifactCache& cache, const Reference& ref, const PullOptions& options) {
  std::string warning;
  // A digest names immutable content: the cache answers without the registry.
  if (!ref.digest.empty()) {
    auto discard_locked = [&](const CachedArtifact& damaged) {
      std::unique_ptr<FileLock> held = cache.lock_entry(damaged.digest, options.waiting);
      cache.discard(damaged);
    };
    if (std::optional<Intact> entry =
            intact(cache, ref.digest, options.offline, warning, discard_locked)) {
      // The record only keeps the entry from prune: a cache this user may
      // read but not write (another user's, shared) serves all the same.
      try {
        if (!cache.resolve(ref)) cache.record(ref, ref.digest);
      } catch (const Error&) {
      }
      return from_cache(cache, ref, std::move(*entry));
    }
  }
  if (options.offline) return pull_offline(cache, ref);

  RegistryClient client(options.registry);
  // An entry in place is whole (entries are renamed into place) and, once
  // pinned, stays: most often it is intact and the entry's lock, which
  // only filling or repairing it needs, is not taken.
  std::string unlocked_warning;
  auto unlocked = [&](const std::string& digest) {
    return intact(cache, digest, false, unlocked_warning, [](const CachedArtifact&) {});
  };
  // Most often a tag still names what it named last: that entry is checked,
  // and given to options.meanwhile, while the registry answers.
  std::optional<RefRecord> known = cache.resolve(ref);
  std::optional<Intact> last;
  std::function<void()> check_last;
  if (known) {
    check_last = [&] {
      try {
        last = unlocked(known->digest);
      } catch (const Error&) {
        // Checked again below, where what it throws is the pull's error.
      }
      if (last && options.meanwhile) options.meanwhile(from_cache(cache, ref, *last));
    };
  }
  Manifest manifest = client.fetch_manifest(ref, std::move(check_last));
  std::optional<Intact> entry = last && last->artifact.digest == manifest.digest
                                    ? std::move(last)
                                    : unlocked(manifest.digest);
  std::unique_ptr<FileLock> held;
  if (!entry) {
    held = cache.lock_entry(manifest.digest, options.waiting);
    entry = intact(cache, manifest.digest, false, warning,
                   [&](const CachedArtifact& damaged) { cache.discard(damaged); });
  }
  bool downloaded = !entry;
  if (downloaded) {
    std::optional<CacheIndexed> filled;
    cache.add(manifest.digest, [&](const std::string& dir) {
      filled = fill_entry(client, ref, manifest, options, dir, cache.seal());
    });
    std::optional<CachedArtifact> artifact = cache.open(manifest.digest);
    if (!artifact) throw Error(cache.root() + ": the entry " + manifest.digest + " vanished");
    auto layer = std::make_shared<Layer>();
    if (filled) {
      *layer =
          Layer{.path = artifact->layer(), .index = std::move(filled->index), .kept = filled->kept};
    } else if (std::string problem =
                   cache.verify(*artifact, layer.get(), ArtifactCache::BlobCheck::when_read);
               !problem.empty()) {
      throw Error(artifact->dir + ": " + problem);  // another process added it first
    }
    entry = Intact{*artifact, std::move(layer)};
  }
  // A tag resolved again to the digest it names keeps its record (when it
  // was pulled), marked used by resolve(): nothing is written.
  if (downloaded || !known || known->digest != manifest.digest) cache.record(ref, manifest.digest);
  return PullResult{ref,
                    std::move(entry->artifact),
                    std::move(entry->layer),
                    manifest.annotations,
                    downloaded,
                    warning,
                    client.requests_sent()};
}

}  // namespace fluxop::oci
