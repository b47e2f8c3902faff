#include "core/distribution/distribution.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"

namespace fluxop::distribution {
namespace fs = std::filesystem;

namespace {

std::shared_ptr<const FileSystem> directory(const std::string& root,
                                            std::shared_ptr<const FileSystem> files) {
  files = subtree(std::move(files), root);
  if (files->kind("flux") != FileSystem::Kind::Directory) {
    throw Error((fs::path(root) / "flux").string() +
                ": not a directory (expected a Flux distribution at " + root + ")");
  }
  return files;
}

}  // namespace

Distribution directory_distribution(const std::string& root,
                                    std::shared_ptr<const FileSystem> files) {
  return Distribution(root, directory(root, std::move(files)));
}

Distribution::Distribution(std::string root) : Distribution(root, directory(root, shared_disk())) {}

Distribution::Distribution(std::string root, std::shared_ptr<const FileSystem> files)
    : root_(std::move(root)), files_(std::move(files)) {
  for (const std::string& name : files_->list("flux", FileSystem::Kind::Directory)) {
    if (auto version = parse_version(name)) versions_.push_back(std::move(*version));
  }
  std::stable_sort(versions_.begin(), versions_.end(),
                   [](const Version& a, const Version& b) { return compare(a, b) < 0; });
}

std::string Distribution::manifests_dir(const Version& version) const {
  return "flux/" + version.original;
}

std::string Distribution::image_catalog_path(const Version& version,
                                             std::string_view variant) const {
  return "flux-images/" + version.original + "/" + std::string(variant) + ".yaml";
}

std::string Distribution::label(const std::string& path) const {
  return (fs::path(root_) / path).string();
}

}  // namespace fluxop::distribution
