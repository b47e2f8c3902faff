// Repairs references by name after renames (prefixes, suffixes, hashes,
// namespaces): a Deployment that mounted ConfigMap "cm" mounts "p-cm" once
// the ConfigMap was renamed.
#pragma once

#include "core/kustomize/resource.h"

namespace fluxop::kustomize {

// Runs once over a top-level build, after nested kustomizations are
// accumulated, as kustomize does. For every referring field of the default
// table (name_reference_specs.h) that holds an old name of a renamed resource
// the referrer may see (same namespace, cluster-scoped, or a RoleBinding's
// ServiceAccount subject namespace), writes that resource's current name, and
// for {name, namespace} maps (subjects, webhook services) its namespace.
// Throws fluxop::Error "<referrer>: <field>: ..." when several different
// resources qualify or a referring map has no name.
void fix_name_references(ResourceList& resources);

}  // namespace fluxop::kustomize
