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
#include "core/reconcile/inventory.h"
#include "core/reconcile/status.h"
#include "core/render/render.h"
#include "core/ssa/change_set.h"
#include "core/ssa/engine.h"

namespace fluxop::reconcile {

// A Kubernetes Event on the instance, as the operator records them.
struct InstanceEvent {
  bool warning = false;  // type Warning, else Normal
  std::string reason;    // Progressing, ReconciliationSucceeded, the failure reasons
  std::string message;
  std::string revision;  // the fluxcd.controlplane.io/revision annotation; may be empty
};

// A reconciliation that failed, and why: the Ready reason it is recorded
// with, which says whether retrying can help.
class ReconcileError : public Error {
 public:
  ReconcileError(Failure failure, const std::string& message) : Error(message), failure_(failure) {}
  Failure failure() const { return failure_; }
  std::string_view reason() const { return reconcile::reason(failure_); }

 private:
  Failure failure_;
};

struct ApplyOptions {
  std::optional<bool> wait;                     // else .spec.wait
  std::optional<std::chrono::seconds> timeout;  // else the reconcileTimeout annotation, else 5m
  std::chrono::seconds lock_timeout{60};
  // Apply an instance whose reconciliation is disabled (refused otherwise).
  bool force = false;
  std::function<void(const ssa::Change&)> on_change;    // each change as it happens
  std::function<void(const std::string&)> on_progress;  // progress lines
  // What stopped the apply ("interrupted by SIGINT"); empty while it may go
  // on. Recorded as the failure's message, whatever request it cut short.
  std::function<std::string()> interruption;
  std::function<void(const InstanceEvent&)> on_event;  // events to record on the instance
  // The instance was read from the cluster (the daemon's --from-cluster):
  // it must exist, and is never written but for its status.
  bool instance_from_cluster = false;
  // The manifest digest of the distribution artifact pulled for this apply
  // (.status.lastArtifactRevision, as the operator records it); empty when
  // the distribution was a directory.
  std::string artifact_revision;
  // The Flux version, before the one applied, whose CRD `crd` serves all
  // of `api_versions` ("" when none is known): named when objects are
  // stored in a version the rendered CRD no longer serves.
  std::function<std::string(const std::string& crd, const std::vector<std::string>& api_versions)>
      intermediate_version;
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

// A reconciliation that failed before anything could be applied (the
// instance did not render, its artifact could not be pulled): recorded on the
// instance when it exists (Ready=False with its reason, Stalled for
// BuildFailed, the history), and as an event. Errors writing it are ignored:
// the failure itself is what the caller reports.
void record_failure(kube::Cluster& cluster, const instance::FluxInstance& flux, Failure failure,
                    const std::string& message,
                    const std::function<void(const InstanceEvent&)>& on_event);

// The same for the instance `ref` in the cluster when it does not load (a
// field its CRD lets through that fluxopctl refuses): BuildFailed, Stalled,
// as the operator records a spec it cannot build; its own annotations'
// requests handled, the history keyed by its spec's digest.
void record_unreadable(kube::Cluster& cluster, const kube::ObjectKey& ref,
                       const std::string& message,
                       const std::function<void(const InstanceEvent&)>& on_event);

// An instance whose reconciliation is disabled before it was ever
// reconciled: its status says so (Ready=True, ReconciliationDisabled,
// "Initialized with reconciliation suspended"), as the operator initializes
// it; one reconciled before keeps its status. Errors are ignored.
void record_disabled(kube::Cluster& cluster, const instance::FluxInstance& flux);

// How long an apply may take: `flag` (--timeout), else the reconcileTimeout
// annotation, else 5m; an unparsable annotation is `warn`ed about, as the
// operator does, and ignored.
std::chrono::seconds apply_timeout(const instance::FluxInstance& flux,
                                   std::optional<std::chrono::seconds> flag,
                                   const std::function<void(const std::string&)>& warn);

// The FluxInstance object so named.
inline kube::ObjectKey instance_ref(std::string ns, std::string name) {
  return {"fluxcd.controlplane.io", "v1", "FluxInstance", std::move(ns), std::move(name)};
}

// The labels of the objects the instance installed: only those are pruned.
ssa::Owner owner_labels(const kube::ObjectKey& instance);

// The rendered objects as JSON, in apply order.
std::vector<nlohmann::json> rendered_json(const render::Rendered& rendered);

// The FluxInstance CRD fluxopctl installs when the cluster has none.
nlohmann::json fluxinstance_crd();

// The FluxInstance object applied: the file's apiVersion, kind, name,
// namespace, labels, annotations and spec.
nlohmann::json instance_object(const instance::FluxInstance& flux);

// Whether applying the instance object would change no value of the live
// one: every value of `object` is there, `manager` owns no field `object`
// lacks (its apply would remove it), and no field is to be taken over. The
// operator never applies its FluxInstance (its users and their GitOps do); a
// write that would only make `manager` a co-owner of the spec again is
// skipped, so that a cluster the operator ran passes to fluxopctl without a
// write.
bool instance_in_place(const nlohmann::json& object, const nlohmann::json& live,
                       std::string_view manager);

}  // namespace fluxop::reconcile
