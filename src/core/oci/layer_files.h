// A Flux distribution read from an artifact's layer as the cache keeps it
// (oci/layer.h): each directory is inflated once, when a file in it is
// first read, and nothing is written to disk.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/distribution/distribution.h"
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
  // Directory -> its files (and those below it), by path.
  mutable std::map<std::string, std::map<std::string, std::string>> inflated_;
};

// The distribution in `layer`, named `label`.
distribution::Distribution layer_distribution(std::shared_ptr<const Layer> layer,
                                              const std::string& label);

}  // namespace fluxop::oci
