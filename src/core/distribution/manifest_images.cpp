#include "core/distribution/manifest_images.h"

#include "core/error.h"

namespace fluxop::distribution {
namespace {

bool is_tag_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         c == '-' || c == '.';
}

// The image of the last container of the last Deployment of `documents`,
// read from `path`.
std::string deployment_image(const std::vector<const yaml::Node*>& documents,
                             const std::string& path) {
  std::string image;
  bool found = false;
  for (const yaml::Node* doc : documents) {
    if (!doc->is_map() || doc->string_at({"kind"}) != "Deployment") continue;
    std::string where = path + ": Deployment " + doc->string_at({"metadata", "name"});
    const yaml::Node* containers = doc->find({"spec", "template", "spec", "containers"});
    if (!containers || !containers->is_sequence()) {
      throw Error(where + ": spec.template.spec.containers: expected a list");
    }
    for (const yaml::Node& container : containers->items()) {
      const yaml::Node* value = container.is_map() ? container.get("image") : nullptr;
      if (!value || !value->is_string()) {
        throw Error(where + ": spec.template.spec.containers: every container needs an image");
      }
      image = value->text();
      found = true;
    }
  }
  if (!found) throw Error(path + ": no Deployment with a container");
  return image;
}

}  // namespace

std::optional<std::string> image_tag(std::string_view image) {
  std::size_t colon = image.rfind(':');
  if (colon == std::string_view::npos) return "latest";
  std::string_view tag = image.substr(colon + 1);
  if (tag.find('/') != std::string_view::npos) return "latest";
  bool valid = !tag.empty() && tag.size() <= 128;
  for (char c : tag) valid = valid && is_tag_char(c);
  if (!valid) return std::nullopt;
  return std::string(tag);
}

ComponentImage manifest_image(std::string_view registry, const std::string& component,
                              const std::vector<const yaml::Node*>& documents,
                              const std::string& path) {
  std::string image = deployment_image(documents, path);
  auto tag = image_tag(image);
  if (!tag) throw Error(path + ": image \"" + image + "\": invalid tag");
  return {component, component_repository(registry, component), std::move(*tag), ""};
}

}  // namespace fluxop::distribution
