#include "core/oci/layer_files.h"

#include <algorithm>
#include <filesystem>

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

FileSystem::Kind LayerFiles::kind(const std::string& path) const {
  std::string normal = resolve(path);
  if (normal.empty()) return Kind::Directory;
  const auto& dirs = layer_->index.dirs;
  if (std::find(dirs.begin(), dirs.end(), normal) != dirs.end()) return Kind::Directory;
  const auto& files = layer_->index.files;
  bool file = std::any_of(files.begin(), files.end(),
                          [&normal](const LayerFile& entry) { return entry.path == normal; });
  return file ? Kind::File : Kind::Missing;
}

std::vector<std::string> LayerFiles::list(const std::string& dir, Kind kind) const {
  std::string normal = resolve(dir);
  std::vector<std::string> out;
  auto add = [&](const std::string& path) {
    if (parent_of(path) == normal) out.push_back(name_of(path));
  };
  if (kind == Kind::Directory) {
    for (const std::string& path : layer_->index.dirs) add(path);
  } else {
    for (const LayerFile& file : layer_->index.files) add(file.path);
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

std::string LayerFiles::resolve(const std::string& path) const {
  std::string normal = std::filesystem::path(path).lexically_normal().string();
  while (normal.ends_with('/')) normal.pop_back();
  return normal == "." ? "" : normal;
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
