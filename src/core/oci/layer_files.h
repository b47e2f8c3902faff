// A Flux distribution read from an artifact's layer as the cache keeps it
// (oci/layer.h): each directory is inflated once, when a file in it is
// first read, and nothing is written to disk.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/distribution/distribution.h"
#include "core/oci/layer.h"

namespace fluxop::oci {

class LayerFiles : public distribution::Files {
 public:
  // `label` names the layer in messages (an oci:// URL pinned to its digest).
  LayerFiles(std::shared_ptr<const Layer> layer, std::string label)
      : layer_(std::move(layer)), label_(std::move(label)) {}

  std::vector<std::string> directories(const std::string& dir) const override;
  std::vector<std::string> files(const std::string& dir) const override;
  std::string read(const std::string& path) const override;

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
