// fluxopctl's artifact cache, $XDG_CACHE_HOME/fluxopctl/oci:
//   sha256/<hex>/manifest.json    the manifest, as the registry sent it
//   sha256/<hex>/layer            the content layer's blob, as downloaded
//   sha256/<hex>/layer.index      its index (oci/layer.h): files and resume
//                                 points, and the blob's digest, sealed
//                                 (core/cache_seal.h)
//   sha256/<hex>/layer.kept       the files the pull's index pass kept (a
//                                 distribution's newest release), named by
//                                 its digest in the index
//   sha256/<hex>/content/         the layer extracted, only once `fluxopctl
//                                 pull` was asked for a directory
//   refs/<registry>/<repository>/<tag>.json, or sha256-<hex>.json for a pull
//                                 by digest: {"url", "digest", "pulled", "seal"};
//                                 its modification time is when it was last used;
//                                 one that is not so (damaged) is absent, one
//                                 whose seal does not open is not trusted
//   tmp/                          entries being written, each pinned by its writer
//   locks/<hex>                   one lock per entry, held while it is pulled
//                                 (flock), naming its holder
// Entries are complete before they appear: they are built under tmp/ and
// renamed into place, so a crash or a concurrent pull never leaves half an
// entry. An entry in use, or being written, is pinned (a shared flock on its
// directory, held until the process exits): prune leaves it. Before an entry
// is used, verify() checks the manifest and the kept files against their
// digests and the index against its seal, and the blob against its digest
// before anything is inflated from it, so a file changed, truncated or
// planted in the cache is never built from: whoever can write only the
// cache can compute a digest, not the seal. Directories and files are created with the permissions
// the umask gives, so that a cache shared under a umask of 002 or 022 serves every user it lets in.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/cache_seal.h"
#include "core/file.h"
#include "core/oci/layer.h"
#include "core/oci/reference.h"

namespace fluxop::oci {

struct CacheIndexed;

struct CachedArtifact {
  std::string digest;  // of the manifest
  std::string dir;     // sha256/<hex>
  std::string manifest() const { return dir + "/manifest.json"; }
  std::string layer() const { return dir + "/layer"; }
  std::string layer_index() const { return dir + "/layer.index"; }
  std::string layer_kept() const { return dir + "/layer.kept"; }
  std::string content() const { return dir + "/content"; }
};

struct RefRecord {
  std::string url;
  std::string digest;
  std::string pulled;  // RFC 3339, when the registry last said so
  std::chrono::system_clock::time_point used;
};

class ArtifactCache {
 public:
  // `root` is created when first written to. Null `seal`: the user's
  // (CacheSeal::user()).
  explicit ArtifactCache(std::string root, const CacheSeal* seal = nullptr);

  // The artifact cache under fluxopctl's cache root (cache_root.h):
  // <cache_root>/oci; empty when `cache_root` is.
  static std::string default_root(const std::string& cache_root);

  const std::string& root() const { return root_; }
  // What seals the cache's derived files.
  const CacheSeal& seal() const { return *seal_; }

  // The entry `digest` when present (unchecked). Throws fluxop::Error
  // naming the path when the cache denies this user access to it.
  std::optional<CachedArtifact> find(const std::string& digest) const;
  // The entry `digest` when present, pinned for the rest of this process:
  // prune leaves it.
  std::optional<CachedArtifact> open(const std::string& digest) const;
  // What is wrong with an entry, empty when nothing is: manifest.json must
  // have the entry's digest, layer.index must be intact, the layer must have
  // the digest it records. The layer read is left in `loaded` when given.
  // Every link is checked: the manifest against the digest, the index's
  // layer against the manifest's layers, the blob against the index. A file
  // that is not a regular file within its bound is missing. An index the
  // seal does not open (planted, or another user's) is derived again from
  // the blob, once its digest holds, as pull indexes it (with the files it
  // keeps), and rewritten sealed when it can be.
  // BlobCheck::when_read, with a sealed index: the blob's size only, its
  // digest left to the first read of it (Layer::blob_checked), which removes
  // the entry when it fails (Layer::on_damaged).
  enum class BlobCheck { now, when_read };
  std::string verify(const CachedArtifact& artifact, Layer* loaded = nullptr,
                     BlobCheck blob = BlobCheck::now) const;
  // manifest.json when it has the entry's digest; nothing otherwise.
  std::optional<std::string> verified_manifest(const CachedArtifact& artifact) const;
  // Removes a damaged entry, pinned or not. Call with its lock held.
  void discard(const CachedArtifact& artifact);
  // The record of `ref` (its tag, or its digest), marked as used now; none
  // when there is none, or when its seal does not open (`why` says so then,
  // naming the record).
  std::optional<RefRecord> resolve(const Reference& ref, std::string* why = nullptr) const;
  // Records that `ref` pointed at `digest` (now).
  void record(const Reference& ref, const std::string& digest);

  // The lock of the entry `digest`, held while it is pulled, so that two
  // pulls of one artifact download it once and pulls of others never wait.
  // `waiting` hears, once, whom it waits for; after `timeout` (another
  // fluxopctl stopped mid-pull) it hears that this one goes on alone, and
  // the result is null: entries are added whole, so two writers are safe.
  std::unique_ptr<FileLock> lock_entry(
      const std::string& digest, const std::function<void(const std::string&)>& waiting,
      std::chrono::milliseconds timeout = std::chrono::seconds(60));

  // Adds the artifact `digest` unless present: `fill` writes manifest.json,
  // layer and layer.index into the directory it is given. The entry is
  // pinned from the start, so that prune never takes it half written.
  CachedArtifact add(const std::string& digest,
                     const std::function<void(const std::string&)>& fill);

  struct Entry {
    CachedArtifact artifact;
    std::vector<RefRecord> refs;
  };
  std::vector<Entry> list() const;

  // Removes the records unused for longer than `max_age`, then the
  // artifacts no record points to and no process has pinned, and leftovers of
  // interrupted writes no process pins; returns the removed artifacts'
  // digests.
  std::vector<std::string> prune(std::chrono::seconds max_age);

  // The entry's content/ (see above), extracted from `layer` unless there.
  std::string extract(const CachedArtifact& artifact, const Layer& layer);

 private:
  std::string record_path(const Reference& ref) const;
  // An unsealed entry's blob (its digest checked) indexed again, as pull
  // indexes it; the index and kept files rewritten sealed when they can be.
  // Throws fluxop::Error when the blob cannot be indexed.
  CacheIndexed index_again(const CachedArtifact& artifact, std::string_view blob,
                           const std::string& blob_digest) const;
  // Layer::on_damaged of the entry: removes it, with its lock held.
  std::function<void()> discard_later(const CachedArtifact& artifact) const;
  // Moves the entry `dir` under tmp/ in one step, so that no reader sees it
  // half removed; returns where it went.
  std::string retire(const std::string& dir);
  std::vector<std::pair<std::string, RefRecord>> records() const;
  // Keeps `fd`, a shared flock on the entry `dir`, until the process exits.
  static void pin(const std::string& dir, int fd);

  std::string root_;
  const CacheSeal* seal_;
};

}  // namespace fluxop::oci
