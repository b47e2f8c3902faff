#include "core/oci/layer_files.h"

#include <algorithm>

#include "core/error.h"

namespace fluxop::oci {

namespace {

// "a/b" of "a/b/c", "" of "c".
std::string parent_of(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::string name_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

std::vector<std::string> LayerFiles::directories(const std::string& dir) const {
  std::vector<std::string> out;
  for (const std::string& path : layer_->index.dirs) {
    if (parent_of(path) == dir) out.push_back(name_of(path));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> LayerFiles::files(const std::string& dir) const {
  std::vector<std::string> out;
  for (const LayerFile& file : layer_->index.files) {
    if (parent_of(file.path) == dir) out.push_back(name_of(file.path));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string LayerFiles::read(const std::string& path) const {
  std::string dir = parent_of(path);
  std::lock_guard<std::mutex> guard(mutex_);
  auto inflated = inflated_.find(dir);
  if (inflated == inflated_.end()) {
    inflated = inflated_
                   .emplace(dir, read_layer_dir(blob_file_reader(layer_->path, label_),
                                                layer_->index, dir, label_))
                   .first;
  }
  auto found = inflated->second.find(path);
  if (found == inflated->second.end()) throw Error(label_ + "/" + path + ": not in the artifact");
  return found->second;
}

distribution::Distribution layer_distribution(std::shared_ptr<const Layer> layer,
                                              const std::string& label) {
  if (layer->index.dirs.empty() || std::find(layer->index.dirs.begin(), layer->index.dirs.end(),
                                             "flux") == layer->index.dirs.end()) {
    throw Error(label + ": no flux/ directory (expected a Flux distribution)");
  }
  return distribution::Distribution(label, std::make_shared<LayerFiles>(std::move(layer), label));
}

}  // namespace fluxop::oci
