// The defaults of a FluxInstance, from the two places upstream applies them:
// the API server, from the CRD schema, when the object is stored; and the
// operator, when it renders an instance. fluxopctl applies both, in that order.
#pragma once

#include <string_view>

#include "core/instance/instance.h"
#include "core/yaml/node.h"

namespace fluxop::instance {

// The API server's defaults (`default:` in the CRD schema), applied like the
// API server does: only inside objects present in the document, and to
// fields that are missing or null (nulls are pruned before defaulting).
//   .spec.wait: true                     .spec.migrateResources: true
//   .spec.cluster.type: kubernetes       .spec.cluster.domain: cluster.local
//   .spec.cluster.networkPolicy: true    .spec.cluster.multitenant: false
//   .spec.cluster.multitenantWorkloadIdentity: false
//   .spec.sharding.key: sharding.fluxcd.io/key
//   .spec.sync.interval: 1m
// Objects and fields of the wrong type are left as they are, for the schema
// check to report.
void apply_schema_defaults(yaml::Node& document);

// The operator's render-time defaults, for what the API server leaves unset
// (sections of docs/api/v1/fluxinstance.md, and upstream's `build instance`):
//   namespace: flux-system when .metadata.namespace is unset (`build instance`)
//   components: the four core controllers when empty ("Components configuration")
//   cluster: type kubernetes, domain cluster.local when .spec.cluster is absent
//     or its domain empty ("Cluster type", "Cluster domain"; networkPolicy is
//     true already, Cluster's initial value)
//   tenant default service accounts: "default" ("Service account configuration")
//   sharding key: sharding.fluxcd.io/key when empty (`build instance`; the
//     schema's default covers only a missing or null key)
//   sharding storage: ephemeral ("Sharding storage")
//   sync name: the instance's namespace ("Sync configuration")
// Not applied: upstream's `build instance` falls back to its public
// distribution artifact when .spec.distribution.artifact is empty; fluxopctl
// chooses its distribution source itself.
void apply_operator_defaults(FluxInstance& instance);

inline constexpr std::string_view kDefaultNamespace = "flux-system";
inline constexpr std::string_view kDefaultServiceAccount = "default";
inline constexpr std::string_view kDefaultShardingKey = "sharding.fluxcd.io/key";

}  // namespace fluxop::instance
