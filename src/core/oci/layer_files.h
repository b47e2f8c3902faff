// A Flux distribution read from an artifact's layer as the cache keeps it
// (oci/layer.h): a file the index pass kept is read from what it kept; each
// other directory is inflated once, when a file in it is first read; nothing
// is written to disk.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/distribution/distribution.h"
#include "core/distribution/version.h"
#include "core/file_system.h"
#include "core/oci/layer.h"

namespace fluxop::oci {

class LayerFiles : public FileSystem {
 public:
  // `label` names the layer in messages (an oci:// URL pinned to its digest).
  LayerFiles(std::shared_ptr<const Layer> layer, std::string label)
      : layer_(std::move(layer)), label_(std::move(label)) {}

  // Paths are relative to the layer's root ("flux/v2.7.1/rbac.yaml").
  Kind kind(const std::string& path) const override;
  std::vector<std::string> list(const std::string& dir, Kind kind) const override;
  std::string read(const std::string& path) const override;
  // The path made normal ("a/./b/../c" is "a/c"): a layer has no links.
  std::string resolve(const std::string& path) const override;

 private:
  std::shared_ptr<const Layer> layer_;
  std::string label_;
  mutable std::mutex mutex_;
  mutable BlobReader blob_;  // made at the first read of the blob
  // Directory -> its files (and those below it), by path.
  mutable std::map<std::string, std::map<std::string, std::string>> inflated_;
};

// Keeps, of a Flux distribution's layer, the files of the newest release
// under flux/ and under flux-images/: those a build of the default range
// ("2.x") reads. A layer that is no distribution keeps nothing.
class NewestReleaseFiles : public FileKeeper {
 public:
  bool wants(const std::string& path) override;
  void take(const std::string& path, std::string bytes) override;
  // A file of the release a newer one replaced: in an archive in ascending
  // order, each release's files are taken, then let go, in turn (14 MB of
  // the distribution's 15), and each reuses the memory of the one before.
  std::string spare() override;
  // The directories kept ("flux/v2.9.4", "flux-images/v2.9.4") and their files.
  std::vector<std::string> dirs() const;
  KeptFiles files() &&;

 private:
  struct Newest {
    distribution::Version version;
    std::string dir;
    KeptFiles files;
  };
  std::map<std::string, Newest> newest_;  // by top directory: "flux", "flux-images"
  std::vector<std::string> spare_;        // the last in archive order first
};

// A layer's blob indexed as the cache keeps it: the newest release's files
// kept (NewestReleaseFiles), `kept_encoding` their encoding (the entry's
// layer.kept, empty when nothing is kept), which index.kept_digest names.
struct CacheIndexed {
  LayerIndex index;
  std::shared_ptr<const KeptFiles> kept{};
  std::string kept_encoding{};
};
// Throws fluxop::Error naming display_name when the blob cannot be indexed.
CacheIndexed index_for_cache(std::string_view blob, const std::string& blob_digest,
                             std::string_view display_name, const ExtractLimits& limits = {});

// The distribution in `layer`, named `label`.
distribution::Distribution layer_distribution(std::shared_ptr<const Layer> layer,
                                              const std::string& label);

}  // namespace fluxop::oci
