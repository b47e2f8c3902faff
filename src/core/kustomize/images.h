// The `images` field: rewrites container image references by image name.
#pragma once

#include <string>

#include "core/kustomize/context.h"

namespace fluxop::kustomize {

// An image reference split like kustomize does:
// [host[:port]/]path[:tag][@digest].
struct ImageRef {
  std::string name;
  std::string tag;
  std::string digest;
};
ImageRef split_image(const std::string& reference);

// Each entry {name, newName, newTag, digest, tagSuffix} applies to every
// `image` of a containers or initContainers list anywhere in a resource
// (CustomResourceDefinitions excepted) and to kustomize's image field specs,
// where the reference's name matches `name`. newTag and digest replace both
// the old tag and digest; tagSuffix extends the old tag.
void transform_images(ResourceList& resources, const yaml::Node& field, const Context& context);

}  // namespace fluxop::kustomize
