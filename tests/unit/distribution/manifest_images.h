// The images of several components, each manifest read from the
// distribution and parsed, then read as render reads it (manifest_image).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/distribution/distribution.h"
#include "core/distribution/manifest_images.h"
#include "core/yaml/parse.h"

namespace fluxop::distribution {

inline std::vector<ComponentImage> images_from_manifests(
    const Distribution& distribution, const Version& version, std::string_view registry,
    const std::vector<std::string>& components) {
  std::vector<ComponentImage> images;
  for (const std::string& component : components) {
    std::string file = distribution.manifests_dir(version) + "/" + component + ".yaml";
    std::string path = distribution.label(file);
    std::vector<yaml::Node> documents = yaml::parse_documents(distribution.read(file), path);
    std::vector<const yaml::Node*> each;
    for (const yaml::Node& document : documents) each.push_back(&document);
    images.push_back(manifest_image(registry, component, each, path));
  }
  return images;
}

}  // namespace fluxop::distribution
