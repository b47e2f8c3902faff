// The namePrefix and nameSuffix fields: rename resources, remembering the
// old names so fix_name_references can follow them.
#pragma once

#include "core/kustomize/context.h"

namespace fluxop::kustomize {

// Both leave CustomResourceDefinitions, Namespaces and
// apiregistration.k8s.io APIServices alone, as kustomize does: their names
// are dictated by what they define.
void transform_name_prefix(ResourceList& resources, const yaml::Node& field,
                           const Context& context);
void transform_name_suffix(ResourceList& resources, const yaml::Node& field,
                           const Context& context);

}  // namespace fluxop::kustomize
