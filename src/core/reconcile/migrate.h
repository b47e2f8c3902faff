// Resource migration (.spec.migrateResources): after an upgrade, custom
// resources stored in an older API version are written again, so that the API
// server stores them in the CRD's storage version, and the CRD's
// status.storedVersions is trimmed to that version — what the Flux Operator
// does so that old versions can later be dropped from the CRDs.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/kube/cluster.h"
#include "core/reconcile/inventory.h"

namespace fluxop::reconcile {

// The storage version of a CRD's spec; empty when none is marked.
std::string storage_version(const nlohmann::json& crd);

// Migrates the resources of every CRD among `live` (as the apply left them)
// whose storedVersions holds more than its storage version, or of every CRD
// when `force` (a forceAt request); reports each migrated CRD with the
// number of objects rewritten.
void migrate_resources(kube::Cluster& cluster, const std::vector<nlohmann::json>& live, bool force,
                       const std::function<void(const std::string&)>& progress);

}  // namespace fluxop::reconcile
