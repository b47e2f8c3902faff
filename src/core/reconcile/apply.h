// `fluxopctl apply`: the Flux Operator's reconciliation of one FluxInstance,
// done once from the outside: the policy on top of the server-side-apply
// engine. It owns what the engine does not know: the lock, the FluxInstance
// CRD and object, the inventory kept in its status (what is pruned), the
// instance's settings (wait, migrateResources, reconcileTimeout), and the
// status and history the operator writes, so that it and fluxopctl can hand
// a cluster to each other.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/instance/instance.h"
#include "core/kube/cluster.h"
#include "core/reconcile/failure.h"
#include "core/reconcile/instance_object.h"
#include "core/reconcile/inventory.h"
#include "core/render/render.h"
#include "core/ssa/change_set.h"
#include "core/ssa/engine.h"
#include "core/wait_status.h"

namespace fluxop::reconcile {

struct ApplyOptions {
  std::optional<bool> wait;                     // else .spec.wait
  std::optional<std::chrono::seconds> timeout;  // else the reconcileTimeout annotation, else 5m
  std::chrono::seconds lock_timeout{60};
  // Apply an instance whose reconciliation is disabled (refused otherwise).
  bool force = false;
  // Delete a CRD no longer rendered whose custom resources remain, with
  // them (kept otherwise; prune.h).
  bool prune_crds = false;
  std::function<void(const ssa::Change&)> on_change;    // each change as it happens
  std::function<void(const std::string&)> on_progress;  // progress lines
  WaitStatus* wait_status = nullptr;                    // told how each wait goes
  // What stopped the apply ("interrupted by SIGINT"); empty while it may go
  // on. Recorded as the failure's message, whatever request it cut short.
  std::function<std::string()> interruption;
  std::function<void(const InstanceEvent&)> on_event;  // events to record on the instance
  // The instance was read from the cluster (the daemon's --from-cluster):
  // it must exist, and is never written but for its status.
  bool instance_from_cluster = false;
  // The generation of the live instance that was rendered (the daemon's
  // --from-cluster); once the lock is held, the instance at another one is
  // not applied (StaleRender). 0: the file's instance, applied as it is.
  std::int64_t generation = 0;
  // The manifest digest of the distribution artifact pulled for this apply
  // (.status.lastArtifactRevision, as the operator records it); empty when
  // the distribution was a directory.
  std::string artifact_revision;
  // "Flux vX is outdated, ..." when the render is an older minor than the
  // distribution's newest (outdated_version): an OutdatedVersion event,
  // recorded as the operator does while it builds, before the revision's
  // Progressing.
  std::optional<std::string> outdated_version;
  // The Flux version, before the one applied, whose CRD `crd` serves all
  // of `api_versions` ("" when none is known): named when objects are
  // stored in a version the rendered CRD no longer serves.
  std::function<std::string(const std::string& crd, const std::vector<std::string>& api_versions)>
      intermediate_version;  // reconcile_instance: the cheap checks (preflight.h) before the first
  // write, refusing the apply when one fails (the one-shot apply; the
  // daemon records every failure on the instance instead).
  bool preflight = false;
};

// The instance changed while the apply waited for the lock: what was
// rendered is not its spec any more, so nothing was written. Render it again.
class StaleRender : public Error {
 public:
  StaleRender(const std::string& message, std::int64_t generation)
      : Error(message), generation_(generation) {}
  std::int64_t generation() const { return generation_; }

 private:
  std::int64_t generation_;
};

struct ApplyResult {
  std::vector<ssa::Change> changes;
  std::string revision;
  std::string message;  // the Ready condition's
};

// `rendered` is what build made of `flux`, with its revision. Throws
// ReconcileError when anything fails; what was applied stays, the status says
// why, and nothing is pruned.
ApplyResult apply_instance(kube::Cluster& cluster, const instance::FluxInstance& flux,
                           const render::Rendered& rendered, const ApplyOptions& options);

// Why applying Flux `version` over an instance whose status is `status`
// is refused, as the operator refuses it: a lower minor than the one
// applied last ("downgrading from v2.6.0 to v2.4.0 is not supported,
// reinstall needed"; the CRDs' stored versions and the controllers' state
// may not go back); nullopt when it is not a downgrade. apply, diff and
// check all say it so.
std::optional<std::string> downgrade_refusal(const nlohmann::json& status,
                                             const distribution::Version& to);

// How long an apply may take: `flag` (--timeout), else the reconcileTimeout
// annotation, else 5m; an unparsable annotation is `warn`ed about, as the
// operator does, and ignored.
std::chrono::seconds apply_timeout(const instance::FluxInstance& flux,
                                   std::optional<std::chrono::seconds> flag,
                                   const std::function<void(const std::string&)>& warn);

}  // namespace fluxop::reconcile
