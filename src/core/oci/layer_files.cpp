#include "core/oci/layer_files.h"

#include <algorithm>
#include <filesystem>

#include "core/digest.h"
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
  const LayerIndex& index = layer_->index;
  bool kept = std::any_of(
      index.kept_dirs.begin(), index.kept_dirs.end(),
      [&path](const std::string& kept_dir) { return path.starts_with(kept_dir + "/"); });
  if (kept && layer_->kept) {
    auto found = layer_->kept->find(path);
    if (found == layer_->kept->end()) throw Error(label_ + "/" + path + ": not in the artifact");
    return found->second;
  }
  auto inflated = inflated_.find(dir);
  if (inflated == inflated_.end()) {
    if (!blob_) blob_ = layer_blob_reader(*layer_, label_);
    inflated = inflated_.emplace(dir, read_layer_dir(blob_, layer_->index, dir, label_)).first;
  }
  auto found = inflated->second.find(path);
  if (found == inflated->second.end()) throw Error(label_ + "/" + path + ": not in the artifact");
  return found->second;
}

bool NewestReleaseFiles::wants(const std::string& path) {
  // "flux/v2.9.4/..." or "flux-images/v2.9.4/...".
  std::size_t top_end = path.find('/');
  std::size_t version_end = path.find('/', top_end + 1);
  if (top_end == std::string::npos || version_end == std::string::npos) return false;
  std::string top = path.substr(0, top_end);
  std::string dir = path.substr(0, version_end);
  if (top != "flux" && top != "flux-images") return false;
  std::optional<distribution::Version> version =
      distribution::parse_version(std::string_view(dir).substr(top_end + 1));
  if (!version || !version->prerelease.empty()) return false;
  auto [newest, first] = newest_.try_emplace(top);
  int order = first ? 1 : distribution::compare(*version, newest->second.version);
  if (order < 0) return false;
  if (order > 0) {
    spare_.clear();
    for (auto file = newest->second.files.rbegin(); file != newest->second.files.rend(); ++file)
      spare_.push_back(std::move(file->second));
    newest->second = Newest{*version, dir, {}};
  }
  return newest->second.dir == dir;
}

std::string NewestReleaseFiles::spare() {
  if (spare_.empty()) return {};
  std::string bytes = std::move(spare_.back());
  spare_.pop_back();
  return bytes;
}

void NewestReleaseFiles::take(const std::string& path, std::string bytes) {
  newest_[path.substr(0, path.find('/'))].files.emplace(path, std::move(bytes));
}

std::vector<std::string> NewestReleaseFiles::dirs() const {
  std::vector<std::string> out;
  for (const auto& [top, newest] : newest_) out.push_back(newest.dir);
  return out;
}

CacheIndexed index_for_cache(std::string_view blob, const std::string& blob_digest,
                             std::string_view display_name, const ExtractLimits& limits) {
  NewestReleaseFiles keeper;
  CacheIndexed out{.index = index_layer(blob, display_name, limits, &keeper)};
  out.index.blob_digest = blob_digest;
  std::vector<std::string> kept_dirs = keeper.dirs();
  KeptFiles kept = std::move(keeper).files();
  if (!kept.empty()) {
    out.kept_encoding = encode_kept_files(kept);
    out.index.kept_dirs = std::move(kept_dirs);
    out.index.kept_digest = sha256_digest(out.kept_encoding);
  }
  out.kept = std::make_shared<const KeptFiles>(std::move(kept));
  return out;
}

KeptFiles NewestReleaseFiles::files() && {
  KeptFiles out;
  for (auto& [top, newest] : newest_) out.merge(newest.files);
  return out;
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
