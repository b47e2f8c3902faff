#include "core/ssa/health.h"

#include "core/kube/meta.h"
#include "core/kube/object.h"
#include "core/ssa/diagnosis.h"

namespace fluxop::ssa {

using nlohmann::json;

namespace {

Health deployment_health(const json& deployment) {
  std::int64_t generation = kube::integer_at(deployment, "/metadata/generation").value_or(0);
  std::int64_t observed = kube::integer_at(deployment, "/status/observedGeneration").value_or(0);
  if (observed < generation) {
    return {false, false, "generation " + std::to_string(generation) + " not yet observed"};
  }
  if (const json* progressing = kube::condition_at(deployment, "Progressing");
      progressing && progressing->value("reason", "") == "ProgressDeadlineExceeded") {
    return {false, true, progressing->value("message", "progress deadline exceeded")};
  }
  // Conditions no wait will change: the controller cannot create pods (a
  // quota, a LimitRange, an admission refusal), or nobody rolls it out.
  if (const json* failure = kube::condition_at(deployment, "ReplicaFailure");
      failure && failure->value("status", "") == "True") {
    return {false, true,
            failure->value("reason", "ReplicaFailure") + ": " + failure->value("message", "")};
  }
  if (kube::true_at(deployment, "/spec/paused")) {
    return {false, true, "the rollout is paused (spec.paused)"};
  }
  std::int64_t wanted = kube::at(deployment, "/spec/replicas")
                            ? kube::integer_at(deployment, "/spec/replicas").value_or(0)
                            : 1;
  std::int64_t updated = kube::integer_at(deployment, "/status/updatedReplicas").value_or(0);
  std::int64_t total = kube::integer_at(deployment, "/status/replicas").value_or(0);
  std::int64_t available = kube::integer_at(deployment, "/status/availableReplicas").value_or(0);
  if (updated < wanted) {
    return {false, false,
            "rollout: " + std::to_string(updated) + " of " + std::to_string(wanted) + " updated"};
  }
  if (total > updated) {
    return {false, false, std::to_string(total - updated) + " old replicas pending termination"};
  }
  if (available < wanted) {
    return {false, false,
            std::to_string(available) + " of " + std::to_string(wanted) + " replicas available"};
  }
  const json* ready = kube::condition_at(deployment, "Available");
  if (wanted > 0 && (!ready || ready->value("status", "") != "True")) {
    return {false, false, ready ? ready->value("message", "not available") : "not available"};
  }
  return {true, false, "rolled out"};
}

Health crd_health(const json& crd) {
  const json* established = kube::condition_at(crd, "Established");
  if (established && established->value("status", "") == "True")
    return {true, false, "established"};
  if (const json* names = kube::condition_at(crd, "NamesAccepted");
      names && names->value("status", "") == "False") {
    return {false, true, names->value("message", "names not accepted")};
  }
  return {false, false, "not yet established"};
}

// A Flux object (the sync's source and Kustomization), by kstatus as the
// operator waits for it: in progress until its controller has observed its
// generation and while it says Reconciling, failed when Stalled. The
// message says the cause its Ready condition gives. One that no controller
// has touched yet is untouched (Engine::wait decides).
Health flux_health(const json& object) {
  const json* ready = kube::condition_at(object, "Ready");
  std::string cause = ready && ready->value("status", "") != "True"
                          ? ready->value("reason", "") + ": " + ready->value("message", "")
                          : "";
  std::int64_t generation = kube::integer_at(object, "/metadata/generation").value_or(0);
  std::optional<std::int64_t> observed = kube::integer_at(object, "/status/observedGeneration");
  if (kube::array_at(object, "/status/conditions").empty() && observed.value_or(-1) < 0)
    return {false, false, "not yet reconciled by its controller", true};
  // A failing reconcile leaves the generation unobserved (source-controller
  // records it on success): the cause is what the Ready condition says.
  if (observed && *observed < generation)
    return {false, false,
            "generation " + std::to_string(generation) + " not yet observed" +
                (cause.empty() ? "" : ": " + cause)};
  if (const json* stalled = kube::condition_at(object, "Stalled");
      stalled && stalled->value("status", "") == "True")
    return {false, true,
            "stalled: " + stalled->value("reason", "") + ": " + stalled->value("message", "")};
  if (const json* reconciling = kube::condition_at(object, "Reconciling");
      reconciling && reconciling->value("status", "") == "True")
    return {false, false,
            "reconciling: " + (cause.empty() ? reconciling->value("message", "") : cause)};
  return {true, false, ready ? ready->value("message", "current") : "current"};
}

}  // namespace

bool health_checked(const json& object) {
  std::string kind = object.value("kind", "");
  return kind == "Deployment" || kind == "CustomResourceDefinition" ||
         kube::is_flux_group(kube::object_key(object).group);
}

std::string held_by(const json& live) {
  std::string reasons;
  const json& metadata = live.value("metadata", json::object());
  std::string finalizers;
  for (const json& finalizer : metadata.value("finalizers", json::array())) {
    if (finalizer.is_string())
      finalizers += (finalizers.empty() ? "" : ", ") + finalizer.get<std::string>();
  }
  if (!finalizers.empty()) reasons = "finalizers: " + finalizers;
  if (const json* terminating = kube::condition_at(live, "Terminating");
      terminating && terminating->value("status", "") == "True")
    reasons += (reasons.empty() ? "" : "; ") + terminating->value("message", "");
  if (!is_terminating(live))
    reasons += std::string(reasons.empty() ? "" : "; ") + "not being deleted";
  return reasons.empty() ? "terminating" : reasons;
}

Health object_health(const json& object) {
  if (is_terminating(object)) return {false, true, "being deleted (" + held_by(object) + ")"};
  std::string kind = object.value("kind", "");
  if (kind == "Deployment") return deployment_health(object);
  if (kind == "CustomResourceDefinition") return crd_health(object);
  if (kube::is_flux_group(kube::object_key(object).group)) return flux_health(object);
  return {true, false, "applied"};
}

}  // namespace fluxop::ssa
