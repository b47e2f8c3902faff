// The `images` field: rewrites container image references by image name.
#pragma once

#include <string>
#include <vector>

#include "core/kustomize/context.h"
#include "core/kustomize/regex.h"

namespace fluxop::kustomize {

// An image reference split like kustomize does:
// [host[:port]/]path[:tag][@digest].
struct ImageRef {
  std::string name;
  std::string tag;
  std::string digest;
};
ImageRef split_image(const std::string& reference);

// An `images` entry as written.
struct ImageOverride {
  std::string name{};
  std::string new_name{};
  std::string new_tag{};
  std::string digest{};
  std::string tag_suffix{};
};

struct ImageChange {
  std::string field;  // "images[0]", for errors
  ImageOverride image;
  Regex matches;  // references of the image, with any tag and digest
};

// Errors name `field`.name when the name makes no regular expression.
ImageChange compile_image_change(ImageOverride image, const Context& context, std::string field);

// `images`: entries {name, newName, newTag, digest, tagSuffix}.
std::vector<ImageChange> read_images(const yaml::Node& field, const Context& context);

// Applies to every `image` of a containers or initContainers list anywhere
// in a resource (CustomResourceDefinitions excepted) and to kustomize's
// image field specs, where the reference's name matches. newTag and digest
// replace both the old tag and digest; tagSuffix extends the old tag.
// The changes apply in order.
void change_images(ResourceList& resources, const std::vector<ImageChange>& changes,
                   const Context& context);

}  // namespace fluxop::kustomize
