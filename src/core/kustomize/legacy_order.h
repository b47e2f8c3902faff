// kustomize's default output order ("legacy"): by kind priority, then by
// group/version/kind, then namespace and name.
#pragma once

#include "core/kustomize/resource.h"

namespace fluxop::kustomize {

void sort_legacy(ResourceList& resources);

}  // namespace fluxop::kustomize
