// The FluxInstance status fluxopctl writes, in the Flux Operator's format:
// kstatus conditions (Ready, Reconciling, Stalled with upstream's reasons),
// the reconciliation history, and the components' images.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/reason.h"

namespace fluxop::reconcile {

// Why a reconciliation failed.
enum class Failure {
  disabled,        // its reconciliation is disabled
  reconciliation,  // the cluster could not be read or written
  health_check,    // the components did not roll out
  build,           // the instance does not render: only a new spec helps
  artifact,        // its distribution artifact could not be read
};

// The Ready condition's reason for it: ReconciliationDisabled,
// ReconciliationFailed, HealthCheckFailed, BuildFailed, ArtifactFailed.
Reason reason(Failure failure);

struct Condition {
  std::string type;    // Ready, Reconciling, Stalled
  std::string status;  // "True", "False", "Unknown"
  Reason reason;
  std::string message;
};

// Adds or replaces the condition of that type in status.conditions; the
// lastTransitionTime moves only when the status changes.
void set_condition(nlohmann::json& status, const Condition& condition, std::int64_t generation,
                   const std::string& now);
void remove_condition(nlohmann::json& status, std::string_view type);

// One reconciliation, for .status.history.
struct Attempt {
  std::string digest;        // of the applied configuration
  Reason reason;             // the Ready reason it ended with
  std::string flux_version;  // "v2.9.4"
  std::string finished;      // RFC 3339
  std::chrono::nanoseconds duration{};
};

// Adds the attempt to .status.history: an entry with the same digest and
// reason is updated (count, last time, duration); newest first; at most 5.
void record_history(nlohmann::json& status, const Attempt& attempt);

// .status.components as the operator writes them: for each component, in
// the instance's order, the image of the `manager` container of the
// Deployment named after it (name, repository with its registry, tag
// "latest" when it has none, digest when pinned).
nlohmann::json components_status(const std::vector<nlohmann::json>& objects,
                                 const std::vector<std::string>& components);

}  // namespace fluxop::reconcile
