#include "core/instance/rules.h"

#include <algorithm>
#include <string>
#include <vector>

namespace fluxop::instance {

namespace {

// The CRD's CEL rules. The sync name's immutability (self == oldSelf) is a
// rule about updates, with no meaning for a file.
void check_cel_rules(const FluxInstance& instance, const Diagnostics& diagnostics) {
  if (instance.name != "flux") {
    diagnostics.fail(".metadata.name", "must be flux, the only name the Flux Operator accepts");
  }
  if (instance.sharding && instance.sharding->storage == "persistent" && !instance.storage) {
    diagnostics.fail(".spec.sharding.storage", "persistent requires .spec.storage to be set");
  }
  const Cluster& cluster = instance.cluster;
  if (cluster.multitenant_workload_identity && !cluster.object_level_workload_identity) {
    diagnostics.fail(".spec.cluster.multitenantWorkloadIdentity",
                     "requires .spec.cluster.objectLevelWorkloadIdentity to be true");
  }
  if (const auto& sync = instance.sync) {
    if (sync->provider == "gcp" && sync->kind != "OCIRepository" && sync->kind != "Bucket") {
      diagnostics.fail(".spec.sync.provider", "gcp is only supported for OCIRepository and Bucket");
    }
    if (sync->provider == "github" && sync->kind != "GitRepository") {
      diagnostics.fail(".spec.sync.provider", "github is only supported for GitRepository");
    }
  }
}

// Upstream renders one set of objects per component and per shard: a
// repeated name yields duplicate objects and a failed build, an empty shard
// name a set that overwrites the main one.
void check_names(const std::vector<std::string>& names, std::string_view path,
                 const Diagnostics& diagnostics) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::string item = std::string(path) + "[" + std::to_string(i) + "]";
    if (names[i].empty()) diagnostics.fail(item, "must not be empty");
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
        names.begin() + static_cast<std::ptrdiff_t>(i)) {
      diagnostics.fail(item, "duplicate " + names[i]);
    }
  }
}

}  // namespace

void check_rules(const FluxInstance& instance, const Diagnostics& diagnostics) {
  check_cel_rules(instance, diagnostics);
  check_names(instance.components, ".spec.components", diagnostics);
  if (instance.sharding)
    check_names(instance.sharding->shards, ".spec.sharding.shards", diagnostics);
}

}  // namespace fluxop::instance
