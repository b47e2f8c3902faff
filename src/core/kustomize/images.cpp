#include "core/kustomize/images.h"

#include <algorithm>

#include "core/error.h"
#include "core/kustomize/builtin_fieldspecs.h"
#include "core/kustomize/fieldspec.h"

namespace fluxop::kustomize {

namespace {

// "^NAME(:tag)?(@digest)?$": references of the image with any tag and
// digest. kustomize pastes the name into a Go regular expression it searches
// with, where "^*" is an optional anchor: a name starting with "*" (as "*"
// itself) matches unanchored.
Regex reference_pattern(const std::string& image, const Context& context,
                        const std::string& field) {
  std::string_view name = image;
  std::string_view anchor = "^";
  if (name.starts_with('*')) {
    name.remove_prefix(std::min(name.find_first_not_of('*'), name.size()));
    anchor = {};
  }
  try {
    return Regex(name, anchor, "(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?$");
  } catch (const Error& e) {
    context.fail(field + ".name", "invalid image name " + quote(image) + ": " + e.what());
  }
}

ImageOverride read_override(const yaml::Node& entry, const Context& context,
                            const std::string& field) {
  if (!entry.is_map()) context.fail(field, "expected a map, found " + describe_value(entry));
  ImageOverride image;
  for (const auto& [key, value] : entry.entries()) {
    std::string* target = key == "name"        ? &image.name
                          : key == "newName"   ? &image.new_name
                          : key == "newTag"    ? &image.new_tag
                          : key == "digest"    ? &image.digest
                          : key == "tagSuffix" ? &image.tag_suffix
                                               : nullptr;
    if (!target) context.fail(field, "unknown field \"" + key + "\"");
    *target = config_string(value, context, field + "." + key);
  }
  return image;
}

std::string changed_reference(const ImageOverride& change, const std::string& reference) {
  ImageRef ref = split_image(reference);
  if (!change.new_name.empty()) ref.name = change.new_name;
  if (!change.new_tag.empty() || !change.digest.empty()) {
    ref.tag = change.new_tag;
    ref.digest = change.digest;
  } else if (!change.tag_suffix.empty()) {
    ref.tag += change.tag_suffix;
    ref.digest.clear();
  }
  std::string result = ref.name;
  if (!ref.tag.empty()) result += ":" + ref.tag;
  if (!ref.digest.empty()) result += "@" + ref.digest;
  return result;
}

// An `image` of a containers or initContainers list, and the field path
// errors name ("containers[].image").
struct ContainerImage {
  yaml::Node* image;
  std::string path;
};

// Every containers and initContainers list's images, at any depth, in the
// order kustomize visits them: found once per resource, for every change.
void collect_container_images(yaml::Node& node, std::vector<ContainerImage>& images) {
  if (node.is_sequence()) {
    for (auto& item : node.items()) collect_container_images(item, images);
    return;
  }
  if (!node.is_map()) return;
  for (auto& [key, value] : node.entries()) {
    collect_container_images(value, images);
    if ((key == "containers" || key == "initContainers") && value.is_sequence()) {
      for (auto& container : value.items()) {
        yaml::Node* image = container.is_map() ? container.get("image") : nullptr;
        if (image) images.push_back({image, key + "[].image"});
      }
    }
  }
}

class ImageUpdate {
 public:
  ImageUpdate(const ImageChange& change, yaml::Node& object) : change_(change), object_(object) {}

  // A change writes a scalar in place, so the images found stay where they are.
  void in_container_lists(const std::vector<ContainerImage>& images) {
    for (const ContainerImage& found : images) update(*found.image, found.path);
  }

  void in_fieldspecs() {
    for (FieldSpec spec : builtin_fieldspecs::images()) {
      spec.create = false;  // kustomize never adds an image
      visit_fields(object_, spec, [&](yaml::Node& image) { update(image, spec.path); });
    }
  }

 private:
  void update(yaml::Node& image, const std::string& path) {
    if (image.is_null()) return;
    if (!image.is_scalar()) {
      throw Error(field_location(object_, {{}, path}) + ": expected a string, found " +
                  describe_value(image));
    }
    if (!change_.matches.search(image.text())) return;
    image = yaml::Node::string(changed_reference(change_.image, image.text()));
  }

  const ImageChange& change_;
  yaml::Node& object_;
};

}  // namespace

ImageRef split_image(const std::string& reference) {
  // A ':' before the first '/' belongs to a registry port, not a tag.
  std::size_t slash = reference.find('/');
  std::size_t from = slash == std::string::npos || slash == 0 ? 0 : slash;
  std::size_t at = reference.find('@', from);
  std::size_t colon = reference.find(':', from);
  if (at != std::string::npos && (colon == std::string::npos || at < colon)) {
    return {reference.substr(0, at), "", reference.substr(at + 1)};
  }
  if (colon == std::string::npos) return {reference, "", ""};
  std::size_t tag_end = at == std::string::npos ? reference.size() : at;
  return {reference.substr(0, colon), reference.substr(colon + 1, tag_end - colon - 1),
          at == std::string::npos ? "" : reference.substr(at + 1)};
}

ImageChange compile_image_change(ImageOverride image, const Context& context, std::string field) {
  Regex matches = reference_pattern(image.name, context, field);
  return {std::move(field), std::move(image), std::move(matches)};
}

std::vector<ImageChange> read_images(const yaml::Node& field, const Context& context) {
  std::vector<ImageChange> changes;
  if (field.is_null()) return changes;
  if (!field.is_sequence()) {
    context.fail("images", "expected a sequence, found " + describe_value(field));
  }
  for (const yaml::Node& entry : field.items()) {
    std::string entry_field = "images[" + std::to_string(changes.size()) + "]";
    changes.push_back(
        compile_image_change(read_override(entry, context, entry_field), context, entry_field));
  }
  return changes;
}

// Change after change on each resource, which gives what kustomize's
// change after change on every resource gives: a resource's changes touch it
// alone, and the first change to fail fails on the first resource with an
// image that is not a string, whatever the change.
void change_images(ResourceList& resources, const std::vector<ImageChange>& changes,
                   const Context& context) {
  if (changes.empty()) return;
  std::vector<ContainerImage> images;
  for (auto& resource : resources) {
    if (resource.kind() == "CustomResourceDefinition") continue;
    images.clear();
    collect_container_images(resource.object(), images);
    for (const ImageChange& change : changes) {
      ImageUpdate update(change, resource.object());
      try {
        // kustomize runs both passes, so a tagSuffix lands twice where they overlap.
        update.in_container_lists(images);
        update.in_fieldspecs();
      } catch (const Error& error) {
        context.fail(change.field, error.what());
      }
    }
  }
}

}  // namespace fluxop::kustomize
