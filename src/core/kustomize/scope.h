// Which kinds are cluster-scoped, as kustomize v5.5.0 knows them from its
// built-in OpenAPI data: an exact group, version and kind. Every other kind,
// custom resources included, counts as namespaced.
#pragma once

#include "core/kustomize/resource.h"

namespace fluxop::kustomize {

bool is_cluster_scoped(const Gvk& gvk);

}  // namespace fluxop::kustomize
