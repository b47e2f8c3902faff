// A running bootstrap installation read from its cluster, for `adopt
// --from-cluster`: each object as far as its appliers set it (the fields
// the managedFields of Apply operations and of kubectl's edits name), not
// what the API server defaulted or the controllers wrote.
#pragma once

#include <string>

#include "core/adopt/installation.h"
#include "core/kube/cluster.h"

namespace fluxop::adopt {

// The objects flux bootstrap labels in `ns` (app.kubernetes.io/part-of:
// flux, app.kubernetes.io/instance: ns) and the cluster-scoped ones
// labelled for it, the namespace, and the source and Kustomization named
// as the namespace (bootstrap's names). Throws kube's errors.
Installation read_cluster(kube::Cluster& cluster, const std::string& ns);

}  // namespace fluxop::adopt
