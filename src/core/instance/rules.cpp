#include "core/instance/rules.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/names.h"

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

// Names that end up in object names, label keys and values or paths: a value
// Kubernetes would refuse is named here rather than failing the apply, and
// one such as "../x" never reaches a path. Empty values take the defaults.
void check_kubernetes_names(const FluxInstance& instance, const Diagnostics& diagnostics) {
  auto check = [&](std::string_view value, std::string_view path, const NameRule& rule) {
    if (!value.empty() && !rule.valid(value)) diagnostics.fail(path, rule.requirement);
  };
  const Distribution& distribution = instance.distribution;
  check(distribution.image_pull_secret, ".spec.distribution.imagePullSecret", kDnsSubdomain);
  check(distribution.artifact_pull_secret, ".spec.distribution.artifactPullSecret", kDnsSubdomain);
  const Cluster& cluster = instance.cluster;
  check(cluster.domain, ".spec.cluster.domain", kDnsSubdomain);
  check(cluster.tenant_default_service_account, ".spec.cluster.tenantDefaultServiceAccount",
        kDnsSubdomain);
  check(cluster.tenant_default_decryption_service_account,
        ".spec.cluster.tenantDefaultDecryptionServiceAccount", kDnsSubdomain);
  check(cluster.tenant_default_kubeconfig_service_account,
        ".spec.cluster.tenantDefaultKubeConfigServiceAccount", kDnsSubdomain);
  if (const auto& sharding = instance.sharding) {
    check(sharding->key, ".spec.sharding.key", kLabelKey);
    // Each shard is a suffix of Deployment and Service names and a label value.
    for (std::size_t i = 0; i < sharding->shards.size(); ++i) {
      check(sharding->shards[i], ".spec.sharding.shards[" + std::to_string(i) + "]", kDnsLabel);
    }
  }
  if (const auto& sync = instance.sync) {
    check(sync->name, ".spec.sync.name", kDnsSubdomain);
    check(sync->pull_secret, ".spec.sync.pullSecret", kDnsSubdomain);
  }
}

}  // namespace

void check_rules(const FluxInstance& instance, const Diagnostics& diagnostics) {
  check_cel_rules(instance, diagnostics);
  check_names(instance.components, ".spec.components", diagnostics);
  if (instance.sharding)
    check_names(instance.sharding->shards, ".spec.sharding.shards", diagnostics);
  check_kubernetes_names(instance, diagnostics);
}

}  // namespace fluxop::instance
