#include "core/distribution/distribution.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/error.h"

namespace fluxop::distribution {
namespace fs = std::filesystem;

Distribution::Distribution(std::string root) : root_(std::move(root)) {
  fs::path flux = fs::path(root_) / "flux";
  std::error_code error;
  if (!fs::is_directory(flux, error)) {
    throw Error(flux.string() + ": not a directory (expected a Flux distribution at " + root_ +
                ")");
  }
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(flux, error)) {
    if (entry.is_directory(error)) names.push_back(entry.path().filename().string());
  }
  if (error) throw Error(flux.string() + ": " + error.message());
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (auto version = parse_version(name)) versions_.push_back(std::move(*version));
  }
  std::stable_sort(versions_.begin(), versions_.end(),
                   [](const Version& a, const Version& b) { return compare(a, b) < 0; });
}

std::string Distribution::manifests_dir(const Version& version) const {
  return (fs::path(root_) / "flux" / version.original).string();
}

std::string Distribution::image_catalog_path(const Version& version,
                                             std::string_view variant) const {
  return (fs::path(root_) / "flux-images" / version.original / (std::string(variant) + ".yaml"))
      .string();
}

}  // namespace fluxop::distribution
