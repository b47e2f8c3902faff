// Rendering a kustomization directory, as `kubectl kustomize DIR` does.
#pragma once

#include <string>

#include "core/kustomize/resource.h"

namespace fluxop::kustomize {

// The resources of the kustomization in `dir`, transformed, with name
// references fixed and in kustomize's legacy order.
ResourceList build(const std::string& dir);

}  // namespace fluxop::kustomize
