// `fluxopctl diff`: what apply would change, object by object: the engine's
// plan (a server-side dry run of every rendered object against the live
// one) and the prunes it would make, printed. Apply follows the same plan,
// so the two cannot disagree.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/instance/instance.h"
#include "core/kube/cluster.h"
#include "core/render/render.h"

namespace fluxop::reconcile {

struct InstanceDiff {
  std::string text;  // unified diffs, then the objects to create and to prune
  int changed = 0;   // objects that would change, be created or pruned
};

// `cluster` must be in dry-run mode.
InstanceDiff diff_instance(kube::Cluster& cluster, const instance::FluxInstance& flux,
                           const render::Rendered& rendered);

}  // namespace fluxop::reconcile
