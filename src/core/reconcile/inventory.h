// The inventory of a FluxInstance, .status.inventory.entries, as the Flux
// Operator keeps it: one `id: <namespace>_<name>_<group>_<kind>, v: <version>`
// per applied object. It is what the next apply prunes against.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/kube/client.h"

namespace fluxop::reconcile {

// Objects are named as the Kubernetes client names them.
using ObjectRef = kube::ObjectKey;
using kube::display_name;
inline ObjectRef object_ref(const nlohmann::json& object) { return kube::object_key(object); }

// "<namespace>_<name>_<group>_<kind>".
std::string inventory_id(const ObjectRef& ref);

// {"entries": [{"id": ..., "v": ...}, ...]}, in the order given.
nlohmann::json inventory_json(const std::vector<ObjectRef>& refs);

// The entries of a .status.inventory; malformed entries are skipped, since an
// inventory is only a record of what was applied.
std::vector<ObjectRef> read_inventory(const nlohmann::json& inventory);

// The objects of `previous` that `current` no longer has (compared by id:
// an object whose API version changed is not stale).
std::vector<ObjectRef> stale_objects(const std::vector<ObjectRef>& previous,
                                     const std::vector<ObjectRef>& current);

}  // namespace fluxop::reconcile
