#include "core/reconcile/failure.h"

#include <ctime>

#include "core/digest.h"
#include "core/file.h"
#include "core/kube/answer.h"
#include "core/kube/meta.h"
#include "core/reconcile/instance_object.h"
#include "core/reconcile/instance_requests.h"
#include "core/rfc3339.h"

namespace fluxop::reconcile {

using nlohmann::json;

// Ready=False with the failure's reason, and Stalled for a build failure,
// which does not go away by retrying: only a new spec helps.
void mark_failed(json& status, Failure failure, const std::string& message, std::int64_t generation,
                 const std::string& now) {
  Reason why = reason(failure);
  set_condition(status, {"Ready", "False", why, message}, generation, now);
  remove_condition(status, "Reconciling");
  if (failure == Failure::build)
    set_condition(status, {"Stalled", "True", why, message}, generation, now);
}

namespace {

// A failure before anything was applied, recorded on `live`, the instance:
// `flux` is what failed to render, none when the live instance did not
// even load (its own annotations and spec are then the ones handled).
void write_failure(kube::Cluster& cluster, const json& live, const instance::FluxInstance* flux,
                   Failure failure, const std::string& message,
                   const std::function<void(const InstanceEvent&)>& on_event) {
  json status = live.value("status", json::object());
  std::int64_t generation =
      live.value("metadata", json::object()).value("generation", std::int64_t{0});
  if (on_event) on_event({reason(failure), message, ""});
  std::string now = now_rfc3339();
  mark_failed(status, failure, message, generation, now);
  mark_handled(status, flux ? flux->annotations : annotations_of(live), /*migrated=*/false);
  // As the operator: a build failure is remembered by the spec's digest,
  // there being no revision.
  if (failure == Failure::build) {
    json spec = flux ? instance_object(*flux)["spec"] : live.value("spec", json::object());
    record_history(status, {sha256_digest(spec.dump()), reason(failure), "", now,
                            std::chrono::nanoseconds(0)});
  }
  // Onto the instance as read: a concurrent apply's status is not overwritten.
  cluster.apply_status(kube::object_key(live), status, kube::resource_version(live));
}

}  // namespace

void record_failure(kube::Cluster& cluster, const instance::FluxInstance& flux, Failure failure,
                    const std::string& message,
                    const std::function<void(const InstanceEvent&)>& on_event) {
  if (cluster.dry_run()) return;
  try {
    std::optional<json> live = get_live_instance(cluster, instance_ref(flux.ns, flux.name));
    if (live) write_failure(cluster, *live, &flux, failure, message, on_event);
  } catch (const Error&) {
    // The cluster may be what failed; the caller reports the failure itself.
  }
}

void record_unreadable(kube::Cluster& cluster, const kube::ObjectKey& ref,
                       const std::string& message,
                       const std::function<void(const InstanceEvent&)>& on_event) {
  if (cluster.dry_run()) return;
  try {
    std::optional<json> live = get_live_instance(cluster, ref);
    if (live) write_failure(cluster, *live, nullptr, Failure::build, message, on_event);
  } catch (const Error&) {
    // As for a failure to render: the caller says it.
  }
}

void record_disabled(kube::Cluster& cluster, const instance::FluxInstance& flux) {
  if (cluster.dry_run()) return;
  kube::ObjectKey ref = instance_ref(flux.ns, flux.name);
  try {
    std::optional<json> live = get_live_instance(cluster, ref);
    if (!live) return;
    json status = live->value("status", json::object());
    // A reconciled instance keeps its last state; the event says the rest.
    if (kube::condition_at(*live, "Ready")) return;
    std::int64_t generation =
        live->value("metadata", json::object()).value("generation", std::int64_t{0});
    set_condition(status,
                  {"Ready", "True", Reason::reconciliation_disabled,
                   "Initialized with reconciliation suspended"},
                  generation, now_rfc3339());
    mark_handled(status, flux.annotations, /*migrated=*/false);
    cluster.apply_status(ref, status);
  } catch (const Error&) {
    // As for an event: the daemon goes on.
  }
}

}  // namespace fluxop::reconcile
