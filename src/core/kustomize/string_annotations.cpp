#include "core/kustomize/string_annotations.h"

namespace fluxop::kustomize {

void stringify_annotations(ResourceList& resources) {
  for (Resource& resource : resources) {
    yaml::Node* metadata = resource.object().get("metadata");
    if (!metadata || !metadata->is_map()) continue;
    yaml::Node* annotations = metadata->get("annotations");
    if (!annotations) continue;
    if (annotations->size() == 0 || !annotations->is_map()) {
      metadata->remove("annotations");
      continue;
    }
    for (auto& [key, value] : annotations->entries()) {
      if (value.is_string()) continue;
      value = yaml::Node::string(value.is_null() ? value.null_form() : value.text());
    }
  }
}

}  // namespace fluxop::kustomize
