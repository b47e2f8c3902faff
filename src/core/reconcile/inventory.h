// The inventory of a FluxInstance, .status.inventory.entries, as the Flux
// Operator keeps it: one `id: <namespace>_<name>_<group>_<kind>, v: <version>`
// per applied object. It is what the next apply prunes against.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/kube/cluster.h"
#include "core/kube/object.h"

namespace fluxop::reconcile {

using kube::display_name;

// "<namespace>_<name>_<group>_<kind>".
std::string inventory_id(const kube::ObjectKey& ref);

// {"entries": [{"id": ..., "v": ...}, ...]}, in the order given.
nlohmann::json inventory_json(const std::vector<kube::ObjectKey>& refs);

// The entries of a .status.inventory; malformed entries are skipped, since an
// inventory is only a record of what was applied.
std::vector<kube::ObjectKey> read_inventory(const nlohmann::json& inventory);

// The objects of `previous` that `current` no longer has (compared by id:
// an object whose API version changed is not stale).
std::vector<kube::ObjectKey> stale_objects(const std::vector<kube::ObjectKey>& previous,
                                           const std::vector<kube::ObjectKey>& current);

// The objects labelled as the instance `instance`'s (its owner labels), of
// every kind an installation is made of, cluster-scoped or in the
// instance's namespace: what its inventory holds, found without it (a
// status removed or rewritten). CRDs first, as an apply orders them. One
// LIST per kind, sent together.
std::vector<kube::ObjectKey> labelled_objects(kube::Cluster& cluster,
                                              const kube::ObjectKey& instance);

// Whether an empty inventory is lost: one of the objects (as live, of the
// render) carries the owner's labels, so was installed.
bool inventory_lost(const std::vector<std::optional<nlohmann::json>>& live,
                    const kube::Labels& owner);

// The keys of the objects the lists hold, list after list, each in its
// query's group, version and kind (a list's items need not say them); the
// objects themselves are not kept.
std::vector<kube::ObjectKey> list_keys(kube::Cluster& cluster,
                                       const std::vector<kube::ListQuery>& queries);

// `inventory`, with the objects of `labelled` it lacks added.
std::vector<kube::ObjectKey> with_labelled(std::vector<kube::ObjectKey> inventory,
                                           const std::vector<kube::ObjectKey>& labelled);

}  // namespace fluxop::reconcile
