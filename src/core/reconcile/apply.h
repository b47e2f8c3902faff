// `fluxopctl apply`: the Flux Operator's reconciliation of one FluxInstance,
// done once from the outside. Stages as fluxcd/pkg/ssa applies them (CRDs and
// Namespaces, then the rest once the CRDs are established), pruning against
// the inventory kept in the FluxInstance status, health checks, and the
// status the operator writes, so that it and fluxopctl can hand a cluster to
// each other.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/reconcile/change_set.h"
#include "core/reconcile/cluster.h"
#include "core/render/render.h"

namespace fluxop::reconcile {

struct ApplyOptions {
  bool wait = true;
  std::optional<std::chrono::seconds> timeout;  // else the reconcileTimeout annotation, else 5m
  std::chrono::seconds lock_timeout{60};
  std::function<void(const Change&)> on_change;         // each change as it happens
  std::function<void(const std::string&)> on_progress;  // progress lines
  std::function<bool()> interrupted;                    // SIGINT/SIGTERM seen
};

struct ApplyResult {
  std::vector<Change> changes;
  std::string revision;
  std::string message;  // the Ready condition's
};

// `instance` is the FluxInstance object as read from its file (apiVersion,
// kind, metadata, spec); `rendered` what build made of it, with its revision.
// Throws fluxop::Error when anything fails; what was applied stays, the
// status says why, and nothing is pruned.
ApplyResult apply_instance(Cluster& cluster, const nlohmann::json& instance,
                           const render::Rendered& rendered, const ApplyOptions& options);

// The rendered objects as JSON, in apply order.
std::vector<nlohmann::json> rendered_json(const render::Rendered& rendered);

// The FluxInstance CRD fluxopctl installs when the cluster has none.
nlohmann::json fluxinstance_crd();

}  // namespace fluxop::reconcile
