// One cluster as the status pages show it: its FluxReport (what runs and how
// healthy) and the state of its FluxInstance, read from the instance's
// status as the operator and fluxopctl write it. Read-only: computing it
// writes nothing and reads no Secret.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kube/cluster.h"
#include "core/report/report.h"

namespace fluxop::status {

struct InstanceState {
  bool found = false;
  std::string ns;  // its namespace and name
  std::string name;
  std::string ready = "Unknown";  // the Ready condition's status: True, False or Unknown
  std::string reason;             // and its reason and message
  std::string message;
  std::string version_range;  // .spec.distribution.version
  std::string artifact;       // .spec.distribution.artifact
  std::string last_applied_revision;
  std::string last_artifact_revision;  // the artifact's tag and digest
  std::string last_reconciled;         // the newest history entry's, RFC 3339
  std::string last_handled_request;    // .status.lastHandledReconcileAt
  bool suspended = false;              // reconcile disabled
  std::size_t inventory_size = 0;      // the objects it applied
  // What only its reconciler knows (the daemon says them; empty in the
  // fleet file): when it reconciles next (RFC 3339), and whether what it
  // applies is verified (signatures).
  std::string next_reconcile;
  std::string verification;
};

// The state of the FluxInstance `live` (nullptr: there is none).
InstanceState instance_state(const nlohmann::json* live);

// One Event on an object, as `kubectl events` shows it; its message
// redacted, escaped and cut as a resource's (report::kMaxResourceMessage).
struct ObjectEvent {
  std::string last_seen;  // RFC 3339
  std::string type;       // Normal or Warning
  std::string reason;
  std::string message;
  std::int64_t count = 1;
};
inline constexpr std::size_t kMaxObjectEvents = 10;

// The newest Events on the object `ref` (its kind, namespace and name),
// newest first, at most kMaxObjectEvents: one list request (a field
// selector).
std::vector<ObjectEvent> object_events(kube::Cluster& cluster, const kube::ObjectKey& ref);
// The Events as the pages' JSON has them (lastSeen, type, reason, count,
// message).
nlohmann::json events_json(const std::vector<ObjectEvent>& events);

struct ClusterOverview {
  std::string context;
  std::string error;  // why the cluster could not be read; then nothing else is known
  std::optional<report::ReportSpec> report;
  InstanceState instance;
  std::vector<ObjectEvent> events;  // the instance's, object_events'
  // The fleet file's: the distribution's newest version the instance's
  // range takes, when newer than what runs ("v2.9.4"); "none" when what
  // runs is it; "unknown" when it could not be told; empty: not asked.
  std::string newer_in_range;
};

// The report's reconcilers summed over every kind.
struct ReconcilerTotals {
  int running = 0;
  int failing = 0;
  int suspended = 0;
};
ReconcilerTotals reconciler_totals(const report::ReportSpec& spec);

// How a cluster is, worst first: the order of the fleet's rows.
enum class Health {
  unreachable,  // could not be read
  not_ready,    // no FluxInstance, its Ready is not True, or a component is not ready
  failing,      // Ready, but reconcilers fail
  suspended,    // Ready, none failing, but the instance or reconcilers are suspended
  healthy,
  count,  // not a health: the number of them
};
Health health(const ClusterOverview& cluster);
// "unreachable", "not ready", "failing", "suspended", "healthy".
std::string_view health_name(Health health);

// The clusters worst first, then by their failing reconcilers (most first),
// then by context.
void sort_worst_first(std::vector<ClusterOverview>& clusters);

}  // namespace fluxop::status
