#include "core/kustomize/name_affix.h"

#include <string>

#include "core/kustomize/fieldspec.h"

namespace fluxop::kustomize {

namespace {

// kustomize matches these against the id a resource was loaded with.
bool keeps_its_name(const Gvk& original) {
  return original.kind == "CustomResourceDefinition" || original.kind == "Namespace" ||
         (original.kind == "APIService" && original.group == "apiregistration.k8s.io");
}

}  // namespace

void add_name_affixes(ResourceList& resources, const std::string& prefix,
                      const std::string& suffix) {
  if (prefix.empty() && suffix.empty()) return;
  for (auto& resource : resources) {
    if (keeps_its_name(resource.original_id().gvk)) continue;
    resource.set_name(prefix + resource.name() + suffix);
    if (!prefix.empty()) resource.add_name_prefix(prefix);
    if (!suffix.empty()) resource.add_name_suffix(suffix);
  }
}

}  // namespace fluxop::kustomize
