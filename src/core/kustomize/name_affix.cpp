#include "core/kustomize/name_affix.h"

#include <string>
#include <string_view>

namespace fluxop::kustomize {

namespace {

// kustomize matches these against the id a resource was loaded with.
bool keeps_its_name(const Gvk& original) {
  return original.kind == "CustomResourceDefinition" || original.kind == "Namespace" ||
         (original.kind == "APIService" && original.group == "apiregistration.k8s.io");
}

// The field's string; null reads as "". Dates are strings to kustomize,
// which reads the kustomization through JSON.
std::string affix_of(const yaml::Node& field, std::string_view name, const Context& context) {
  if (field.is_null()) return {};
  if (field.is_scalar() &&
      (field.tag() == yaml::Tag::String || field.tag() == yaml::Tag::Timestamp))
    return field.text();
  std::string found = field.is_scalar() ? field.text() : "a " + std::string(kind_name(field));
  context.fail(name, "expected a string, found " + found);
}

void add_to_names(ResourceList& resources, const std::string& prefix, const std::string& suffix) {
  if (prefix.empty() && suffix.empty()) return;
  for (auto& resource : resources) {
    if (keeps_its_name(resource.original_id().gvk)) continue;
    resource.set_name(prefix + resource.name() + suffix);
  }
}

}  // namespace

void transform_name_prefix(ResourceList& resources, const yaml::Node& field,
                           const Context& context) {
  add_to_names(resources, affix_of(field, "namePrefix", context), "");
}

void transform_name_suffix(ResourceList& resources, const yaml::Node& field,
                           const Context& context) {
  add_to_names(resources, "", affix_of(field, "nameSuffix", context));
}

}  // namespace fluxop::kustomize
