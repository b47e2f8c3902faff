// `fluxopctl diff`: what apply would change, object by object, from a
// server-side dry run of every rendered object against the live one, plus
// the objects apply would prune.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/reconcile/cluster.h"
#include "core/render/render.h"

namespace fluxop::reconcile {

struct InstanceDiff {
  std::string text;  // unified diffs, then the objects to create and to prune
  int changed = 0;   // objects that would change, be created or pruned
};

// `cluster` must be in dry-run mode.
InstanceDiff diff_instance(Cluster& cluster, const nlohmann::json& instance,
                           const render::Rendered& rendered, bool color);

}  // namespace fluxop::reconcile
