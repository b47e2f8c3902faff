#include "core/distribution/distribution.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/error.h"
#include "core/yaml/parse.h"

namespace fluxop::distribution {
namespace fs = std::filesystem;

namespace {

class DirectoryFiles : public Files {
 public:
  explicit DirectoryFiles(std::string root) : root_(std::move(root)) {}

  std::vector<std::string> directories(const std::string& dir) const override {
    return names(dir, true);
  }
  std::vector<std::string> files(const std::string& dir) const override {
    return names(dir, false);
  }
  std::string read(const std::string& path) const override {
    return yaml::read_file((fs::path(root_) / path).string());
  }

 private:
  std::vector<std::string> names(const std::string& dir, bool directories) const {
    fs::path where = fs::path(root_) / dir;
    std::vector<std::string> out;
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(where, error)) {
      if (directories ? entry.is_directory(error) : entry.is_regular_file(error))
        out.push_back(entry.path().filename().string());
    }
    if (error) throw Error(where.string() + ": " + error.message());
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string root_;
};

std::shared_ptr<const Files> directory(const std::string& root) {
  fs::path flux = fs::path(root) / "flux";
  std::error_code error;
  if (!fs::is_directory(flux, error)) {
    throw Error(flux.string() + ": not a directory (expected a Flux distribution at " + root + ")");
  }
  return std::make_shared<DirectoryFiles>(root);
}

}  // namespace

Distribution::Distribution(std::string root) : Distribution(root, directory(root)) {}

Distribution::Distribution(std::string root, std::shared_ptr<const Files> files)
    : root_(std::move(root)), files_(std::move(files)) {
  for (const std::string& name : files_->directories("flux")) {
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
