// How a reconciliation fails: the error that says why (its Ready reason),
// the events recorded on the instance, and the failures recorded on it when
// nothing could be applied (the instance did not render, did not load, its
// artifact could not be pulled).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/instance/instance.h"
#include "core/kube/cluster.h"
#include "core/reconcile/status.h"

namespace fluxop::reconcile {

// A Kubernetes Event on the instance, as the operator records them; its
// type is its reason's (event_type).
struct InstanceEvent {
  Reason reason;  // Progressing, ReconciliationSucceeded, the failure reasons...
  std::string message;
  std::string revision;  // the fluxcd.controlplane.io/revision annotation; may be empty
  // The instance's, once the apply has read it: its events do not read it
  // again.
  std::string uid{};
};

// A reconciliation that failed, and why: the Ready reason it is recorded
// with, which says whether retrying can help.
class ReconcileError : public Error {
 public:
  ReconcileError(Failure failure, const std::string& message) : Error(message), failure_(failure) {}
  Failure failure() const { return failure_; }
  Reason reason() const { return reconcile::reason(failure_); }

 private:
  Failure failure_;
};

// Ready=False with the failure's reason, and Stalled for a build failure,
// which does not go away by retrying: only a new spec helps.
void mark_failed(nlohmann::json& status, Failure failure, const std::string& message,
                 std::int64_t generation, const std::string& now);

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

}  // namespace fluxop::reconcile
