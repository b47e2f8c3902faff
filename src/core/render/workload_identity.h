// The workload identity settings of .spec.cluster, as `build instance`
// renders them for each Flux version: the ObjectLevelWorkloadIdentity
// feature gate, the tenants' default service accounts, and whether the
// controllers keep the right to create service account tokens.
#pragma once

#include <vector>

#include "core/distribution/version.h"
#include "core/instance/instance.h"
#include "core/render/patch.h"

namespace fluxop::render {

struct WorkloadIdentity {
  std::vector<Patch> patches;
  // The crd-controller role loses the rule that lets it create service
  // account tokens, which only object-level workload identity needs.
  bool drop_token_permission = false;
};

// Throws fluxop::Error naming the instance file and the field a Flux
// version does not support.
WorkloadIdentity workload_identity(const instance::FluxInstance& flux,
                                   const distribution::Version& version);

}  // namespace fluxop::render
