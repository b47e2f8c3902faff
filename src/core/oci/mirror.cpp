#include "core/oci/mirror.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include "core/concurrently.h"
#include "core/error.h"
#include "core/file.h"

namespace fluxop::oci {

namespace {

namespace fs = std::filesystem;

bool is_index(const Manifest& manifest) { return !manifest.manifests.empty(); }

bool platform_named(const std::string& platform, const std::vector<std::string>& platforms) {
  return std::any_of(platforms.begin(), platforms.end(), [&](const std::string& named) {
    return platform == named || platform.starts_with(named + "/");
  });
}

// A directory of its own for the blobs on their way, removed with it.
class ScratchDir {
 public:
  ScratchDir() {
    path_ =
        create_unique_directory((fs::temp_directory_path() / "fluxopctl-mirror-").string(), 0700);
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// What the copies share: the totals, the blobs placed (digest -> a
// destination repository holding it, to mount from), the progress.
class Shared {
 public:
  explicit Shared(const MirrorOptions& options) : options_(options) {}

  void say(const std::string& line) {
    std::lock_guard<std::mutex> held(mutex_);
    if (options_.progress) options_.progress(line);
  }
  // Where `digest` was placed, other than `repository`; empty when nowhere.
  std::string placed_elsewhere(const std::string& digest, const std::string& repository) {
    std::lock_guard<std::mutex> held(mutex_);
    auto it = placed_.find(digest);
    return it == placed_.end() || it->second == repository ? "" : it->second;
  }
  void placed(const std::string& digest, const std::string& repository) {
    std::lock_guard<std::mutex> held(mutex_);
    placed_.emplace(digest, repository);
  }
  // --dry-run: whether this blob is counted for the first time.
  bool first_planned(const std::string& digest) {
    std::lock_guard<std::mutex> held(mutex_);
    return planned_.insert(digest).second;
  }
  void add(const MirrorTotals& more) {
    std::lock_guard<std::mutex> held(mutex_);
    totals_.images += more.images;
    totals_.images_present += more.images_present;
    totals_.manifests_pushed += more.manifests_pushed;
    totals_.blobs_copied += more.blobs_copied;
    totals_.blobs_mounted += more.blobs_mounted;
    totals_.blobs_present += more.blobs_present;
    totals_.bytes_copied += more.bytes_copied;
  }
  MirrorTotals totals() {
    std::lock_guard<std::mutex> held(mutex_);
    return totals_;
  }
  // Held while a referrers tag is read, added to and written back.
  std::mutex referrers_tags;

 private:
  const MirrorOptions& options_;
  std::mutex mutex_;
  std::map<std::string, std::string> placed_;
  std::set<std::string> planned_;
  MirrorTotals totals_;
};

// One worker's copies, through clients of its own (a client is not shared
// between threads), its blobs on their way in `scratch` of its own (two
// workers may fetch the same blob at once).
class Copier {
 public:
  Copier(const MirrorOptions& options, Shared& shared, std::string scratch)
      : options_(options),
        shared_(shared),
        scratch_(std::move(scratch)),
        client_(options.registry) {}

  void copy(const MirrorCopy& copy) {
    MirrorTotals totals;
    totals.images = 1;
    const std::string& digest = copy.source.digest;
    std::string line = copy.source.str() + " -> " + copy.destination.str();
    if (client_.has_manifest(copy.destination, digest)) {
      // A copy by digest is a referrer (a signature's bundle): there, it may
      // still be missing from its subject's referrers tag (a mirror stopped
      // between the two pushes, or made before fluxopctl kept the tag).
      if (copy.destination.tag.empty() && !options_.dry_run)
        client_.list_in_referrers_tag(copy.destination,
                                      client_.fetch_document(copy.destination, digest),
                                      shared_.referrers_tags);
      totals.images_present = 1;
      shared_.add(totals);
      shared_.say("present " + line);
      return;
    }
    Manifest top = client_.fetch_document(copy.source, digest);
    std::vector<Descriptor> children;
    if (is_index(top)) children = mirrored_children(top, options_.platforms, copy.source.str());
    for (const Descriptor& child : children) {
      Reference source = copy.source;
      Reference destination = copy.destination;
      destination.digest = source.digest = child.digest;
      if (client_.has_manifest(destination, child.digest)) continue;
      copy_manifest(source, destination, client_.fetch_document(source, child.digest), totals);
    }
    try {
      copy_manifest(copy.source, copy.destination, top, totals);
    } catch (const Error& e) {
      if (children.size() == top.manifests.size()) throw;
      // The index unchanged, some of its children absent: a registry that
      // checks an index's children are all there refuses it.
      throw Error(std::string(e.what()) +
                  "; --platform leaves the index without its other platforms' manifests, which "
                  "the registry must accept (distribution v3: validation.manifests.indexes."
                  "platforms: none)");
    }
    shared_.add(totals);
    shared_.say((options_.dry_run ? "would copy " : "copied ") + line + " (" +
                std::to_string(totals.blobs_copied) + " blobs, " +
                std::to_string(totals.bytes_copied) + " bytes)");
  }

 private:
  // Its blobs, then the manifest itself, under the destination's digest or
  // else its tag.
  void copy_manifest(const Reference& source, const Reference& destination,
                     const Manifest& manifest, MirrorTotals& totals) {
    if (!is_index(manifest)) {
      copy_blob(source, destination, manifest.config, totals);
      for (const Descriptor& layer : manifest.layers) copy_blob(source, destination, layer, totals);
    }
    if (options_.dry_run) return;
    client_.push_manifest(destination, manifest, shared_.referrers_tags);
    ++totals.manifests_pushed;
  }

  void copy_blob(const Reference& source, const Reference& destination, const Descriptor& blob,
                 MirrorTotals& totals) {
    const std::string& repository = destination.repository;
    if (client_.has_blob(destination, blob.digest)) {
      ++totals.blobs_present;
      shared_.placed(blob.digest, repository);
      return;
    }
    if (options_.dry_run) {
      if (!shared_.first_planned(blob.digest)) return;
      ++totals.blobs_copied;
      totals.bytes_copied += blob.size;
      return;
    }
    std::string from = shared_.placed_elsewhere(blob.digest, repository);
    if (!from.empty() && client_.mount_blob(destination, blob.digest, from)) {
      ++totals.blobs_mounted;
      shared_.placed(blob.digest, repository);
      return;
    }
    // fetch_blob checks the size and digest of every byte it receives.
    std::string path = scratch_ + "/" + blob.digest.substr(7);
    client_.fetch_blob(source, blob, path, kMaxMirrorBlobBytes);
    client_.push_blob_file(destination, blob, path);
    std::error_code ignored;
    fs::remove(path, ignored);
    ++totals.blobs_copied;
    totals.bytes_copied += blob.size;
    shared_.placed(blob.digest, repository);
  }

  const MirrorOptions& options_;
  Shared& shared_;
  std::string scratch_;
  RegistryClient client_;
};

}  // namespace

std::vector<Descriptor> mirrored_children(const Manifest& index,
                                          const std::vector<std::string>& platforms,
                                          const std::string& what) {
  if (platforms.empty()) return index.manifests;
  std::vector<Descriptor> children;
  std::string offered;
  for (const Descriptor& child : index.manifests) {
    if (platform_named(child.platform, platforms)) children.push_back(child);
    if (!child.platform.empty()) offered += (offered.empty() ? "" : ", ") + child.platform;
  }
  if (children.empty()) {
    throw Error(what + ": no manifest for the platforms asked (--platform); the index has " +
                (offered.empty() ? std::string("none named") : offered));
  }
  return children;
}

MirrorTotals mirror(const std::vector<MirrorCopy>& copies, const MirrorOptions& options) {
  Shared shared(options);
  ScratchDir scratch;
  std::atomic<int> worker_ids{0};
  // Each worker a copier of its own (its connection, its scratch directory);
  // a failure stops the others at their next copy.
  run_concurrently(copies.size(), options.concurrency, [&]() -> ItemWork {
    std::string own = scratch.path() + "/" + std::to_string(worker_ids++);
    create_directories(own);
    auto copier = std::make_shared<Copier>(options, shared, own);
    return [copier, &copies](std::size_t i) { copier->copy(copies[i]); };
  });
  return shared.totals();
}

}  // namespace fluxop::oci
