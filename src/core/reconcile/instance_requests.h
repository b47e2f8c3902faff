// What users ask of a FluxInstance through its annotations, as the upstream
// CLI asks it (`flux-operator reconcile|suspend|resume instance`), and the
// wait for the answer: a reconcile requested at a time is answered once the
// status's lastHandledReconcileAt says that time and Ready is True for the
// current generation.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/kube/cluster.h"
#include "core/reconcile/inventory.h"
#include "core/wait_status.h"

namespace fluxop::reconcile {

inline constexpr std::string_view kReconcileAnnotation = "fluxcd.controlplane.io/reconcile";
inline constexpr std::string_view kRequestedAtAnnotation = "reconcile.fluxcd.io/requestedAt";
inline constexpr std::string_view kForceAtAnnotation = "reconcile.fluxcd.io/forceAt";
// The field manager of the upstream CLI's writes, which these are.
inline constexpr std::string_view kCliFieldManager = "flux-operator-ctl";

// The Leases held by what reconciles the instances of a namespace: the
// operator's leader election (and `apply --watch --enable-leader-election`'s),
// and the one `apply --watch` renews without leader election, so that a
// request knows something answers it.
inline constexpr std::string_view kOperatorLease = "flux-operator";
inline constexpr std::string_view kWatchLease = "fluxopctl.watch";

// What reconciles the FluxInstance of namespace `ns` when asked: a Lease
// above held and renewed within its duration, or a Deployment of the
// operator (app.kubernetes.io/name: flux-operator) or of fluxopctl's daemon
// (app.kubernetes.io/name: fluxopctl) that has replicas. Its name, empty
// when nothing does; nullopt when the caller may not read them.
std::optional<std::string> find_reconciler(kube::Cluster& cluster, const std::string& ns);

// The Deployments of the upstream operator in namespace `ns` that have
// replicas (app.kubernetes.io/name: flux-operator): an operator that
// reconciles the instance beside `apply --watch`.
std::vector<std::string> running_operators(kube::Cluster& cluster, const std::string& ns);

// Now, as the time of a request: RFC 3339 in UTC with nanoseconds, trailing
// zeros trimmed (Go's RFC3339Nano).
std::string request_time(std::chrono::system_clock::time_point now);

// What a user asks of the instance, as the upstream CLI's commands of these
// names do.
enum class InstanceRequest {
  reconcile,
  suspend,
  resume,
  count,  // not a request: the number of them
};

// "requested", "suspended", "resumed": what it did.
std::string_view request_done(InstanceRequest request);

// The annotations that ask it at `now` (request_time): suspend disables the
// reconciliation; reconcile and resume request one at `now`, with a forced
// migration of the Flux resources when `force`; resume enables it again.
std::map<std::string, std::string> request_annotations(InstanceRequest request,
                                                       const std::string& now, bool force);

// Whether a reconciliation answers the request (suspend's answer is that none
// runs): the CLI waits for it.
bool request_answered(InstanceRequest request);

// Why a request to the instance `ref` would wait for nothing, when nothing
// reconciles it (find_reconciler): what to run instead. Empty when something
// reconciles it, or when the caller may not tell.
std::string nothing_reconciles(kube::Cluster& cluster, const kube::ObjectKey& ref);

// Sets the annotations on the live instance (the others stay); throws
// fluxop::Error naming it when it does not exist.
void annotate_instance(kube::Cluster& cluster, const kube::ObjectKey& ref,
                       const std::map<std::string, std::string>& annotations);

// The requests of the annotations, handled by a reconciliation whatever its
// outcome (as the operator records them): `reconcile --with-source`-style
// tools wait for lastHandledReconcileAt to equal what they asked. A forceAt
// request is handled only once its migration ran (`migrated`): one that
// failed, or never started, is made again by the next reconcile.
void mark_handled(nlohmann::json& status, const std::map<std::string, std::string>& annotations,
                  bool migrated);

// The string annotations of an object.
std::map<std::string, std::string> annotations_of(const nlohmann::json& object);

// Whether the `reconcile` annotation among `annotations` disables the
// reconciliation (`disabled`, in any case, as the operator reads it).
bool reconcile_disabled(const std::map<std::string, std::string>& annotations);
// The same, of an object.
bool reconcile_disabled(const nlohmann::json& object);

// One reading of the instance, for a wait.
struct Readiness {
  enum class State { waiting, ready, failed } state = State::waiting;
  std::string message;  // Ready's message when ready; why it failed, or what it waits for
};

// As the upstream CLI reads it: suspended is a failure, and so is being
// deleted (the uninstall under way); a reconcile asked
// at `requested_at` (when not empty) not handled yet is waiting; then
// Ready for the current generation: True is ready, False is a failure
// (unless its health check was canceled), else waiting.
Readiness instance_readiness(const nlohmann::json& live, const std::string& requested_at);

// Polls the instance until it is ready (its Ready message returned) or
// failed (thrown), or `deadline` passes: then throws naming what is not
// ready, the instance's Ready condition and its components not rolled out.
// An `interruption` ends the wait early (thrown, its words the message).
// `status` (when not null) is told at each poll what the instance waits for.
std::string wait_ready(kube::Cluster& cluster, const kube::ObjectKey& ref,
                       const std::string& requested_at,
                       std::chrono::steady_clock::time_point deadline,
                       const std::function<std::string()>& interruption, WaitStatus* status);

}  // namespace fluxop::reconcile
