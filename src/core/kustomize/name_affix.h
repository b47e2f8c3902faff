// The namePrefix and nameSuffix fields: rename resources, remembering the
// old names so fix_name_references can follow them.
#pragma once

#include "core/kustomize/context.h"

namespace fluxop::kustomize {

// Both leave CustomResourceDefinitions, Namespaces and
// apiregistration.k8s.io APIServices alone, as kustomize does: their names
// are dictated by what they define.
void add_name_affixes(ResourceList& resources, const std::string& prefix,
                      const std::string& suffix);

}  // namespace fluxop::kustomize
