// Whether an applied object is ready, from its live state, with the rules of
// kstatus for the kinds a Flux installation waits for: Deployments rolled out
// and available, CustomResourceDefinitions established, the sync's Flux
// objects reconciled. Other kinds are ready once applied.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace fluxop::ssa {

struct Health {
  bool ready = false;
  // Will not become ready by waiting: progress deadline exceeded, replicas
  // that cannot be created (ReplicaFailure), a paused rollout.
  bool failed = false;
  std::string message;  // why not ready, from the object's status and conditions
  // A Flux object no controller has reconciled yet (no condition, its
  // CRD's default observedGeneration -1): ready once its controller
  // touches it, or when none does (Engine::wait's grace).
  bool untouched = false;
};

// Not ready, and failed, while the object is being deleted (a CRD held
// Terminating by its resources' finalizers): it is going, whatever its
// status says, and no wait brings it back.
Health object_health(const nlohmann::json& object);

// Why an object being deleted is still there: its finalizers, and for a CRD
// the condition the API server sets while it removes its custom resources;
// "not being deleted" when it is not.
std::string held_by(const nlohmann::json& live);

// Whether object_health waits for the object: a Deployment, a CRD, a Flux
// object.
bool health_checked(const nlohmann::json& object);

}  // namespace fluxop::ssa
