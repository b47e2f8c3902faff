// Reads the real Flux distribution beside the repository (shared_distribution.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../shared_distribution.h"
#include "core/distribution/image_catalog.h"
#include "core/distribution/manifest_images.h"
#include "core/distribution/resolve.h"
#include "manifest_images.h"

namespace fluxop::distribution {
namespace {

TEST_CASE("real distribution: versions, resolution and images agree") {
  if (!testing::have_shared_distribution()) return;
  Distribution real(testing::kSharedDistribution);
  std::vector<std::string> names;
  for (const Version& version : real.versions()) names.push_back(version.original);
  CHECK(names == std::vector<std::string>{
                     "v2.2.3", "v2.3.0", "v2.4.0", "v2.5.0", "v2.5.1", "v2.6.0", "v2.6.1", "v2.6.2",
                     "v2.6.3", "v2.6.4", "v2.7.0", "v2.7.1", "v2.7.2", "v2.7.3", "v2.7.4", "v2.7.5",
                     "v2.8.0", "v2.8.1", "v2.8.2", "v2.8.3", "v2.8.5", "v2.8.6", "v2.8.7", "v2.8.8",
                     "v2.9.0", "v2.9.1", "v2.9.2", "v2.9.3", "v2.9.4"});
  CHECK(resolve_version(real, "2.x").original == "v2.9.4");
  CHECK(resolve_version(real, "2.8.x").original == "v2.8.8");
  CHECK(resolve_version(real, "~2.7.0").original == "v2.7.5");
  CHECK(resolve_version(real, "2.2.x").original == "v2.2.3");

  // The upstream catalogs pin the tags the manifests run, except in v2.2.3,
  // where the catalog still names source-controller v1.2.4: there `build
  // instance` (manifest tags) and the operator (catalog) disagree.
  std::vector<std::string> differences;
  const std::vector<std::string> components{
      "source-controller",       "kustomize-controller",       "helm-controller",
      "notification-controller", "image-reflector-controller", "image-automation-controller"};
  for (const Version& version : real.versions()) {
    CAPTURE(version.original);
    auto from_manifests = images_from_manifests(real, version, "ghcr.io/fluxcd", components);
    auto from_catalog = catalog_images(real, version, "ghcr.io/fluxcd", "", components);
    REQUIRE(from_catalog.size() == components.size());
    for (const ComponentImage& pinned : from_catalog) {
      CHECK(pinned.digest.size() == 71);
      auto same = [&](const ComponentImage& image) { return image.component == pinned.component; };
      auto manifest = std::find_if(from_manifests.begin(), from_manifests.end(), same);
      REQUIRE(manifest != from_manifests.end());
      CHECK(manifest->repository == pinned.repository);
      if (manifest->tag != pinned.tag) {
        differences.push_back(version.original + " " + pinned.component + " " + manifest->tag +
                              " " + pinned.tag);
      }
    }
  }
  CHECK(differences == std::vector<std::string>{"v2.2.3 source-controller v1.2.5 v1.2.4"});
}

}  // namespace
}  // namespace fluxop::distribution
