// The `namespace` field: moves every namespaced resource into one namespace.
#pragma once

#include "core/kustomize/context.h"

namespace fluxop::kustomize {

// Sets metadata.namespace on namespaced kinds (cluster-scoped ones are left
// alone), renames v1 Namespace objects to the namespace, sets the
// namespace of (Cluster)RoleBinding subjects named "default" and the
// service namespaces of APIServices and CRD conversion webhooks. Fails
// when two resources end up with the same id. An empty `ns` changes nothing.
void set_namespace(ResourceList& resources, const std::string& ns, const Context& context);

}  // namespace fluxop::kustomize
