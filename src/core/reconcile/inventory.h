// The inventory of a FluxInstance, .status.inventory.entries, as the Flux
// Operator keeps it: one `id: <namespace>_<name>_<group>_<kind>, v: <version>`
// per applied object. It is what the next apply prunes against.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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

}  // namespace fluxop::reconcile
