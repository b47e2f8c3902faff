// The reasons fluxopctl writes, as the Flux Operator writes them: of the
// conditions of a FluxInstance and a FluxReport, of the Events on the
// instance (with their type), of flux_instance_info's reason label. One enum
// and one table (reason.cpp) indexed by it, checked when it compiles to name
// every reason once and in order: a reason is spelled nowhere else, so that
// what the daemon, the one-shot apply and the report write cannot drift.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace fluxop {

enum class Reason {
  progressing,               // a revision being installed or upgraded to
  reconciliation_succeeded,  // applied and healthy; the report written
  reconciliation_disabled,   // the reconcile annotation says disabled
  reconciliation_failed,     // the cluster could not be read or written
  health_check_failed,       // the components did not roll out
  health_check_canceled,     // upstream's, read only: its health check cut short by a new spec
  build_failed,              // the instance does not render
  artifact_failed,           // its distribution artifact could not be read
  outdated_version,          // an older minor than the distribution's newest
  prune_skipped,             // a CRD a prune kept while its resources remain
  controller_conflict,       // another controller writes the instance too
  // fluxopctl's own: the Ready reason `fluxopctl delete` writes before it
  // deletes anything, so that one interrupted half-way is not Ready and says
  // how to finish. The operator needs none: a deletionTimestamp says it.
  uninstalling,
  count,  // not a reason: the number of them
};

// The type of a core/v1 Event.
enum class EventType {
  none,  // a condition's reason only, never an Event's
  normal,
  warning,
  count,  // not a type: the number of them
};

// "ReconciliationSucceeded", as written in a condition, an Event, a label.
std::string_view name(Reason reason);
// "Normal", "Warning"; "" for none.
std::string_view name(EventType type);
// The type of the Event recorded with `reason`.
EventType event_type(Reason reason);
// The message the operator writes with `reason` where it has one shape, each
// "{}" of it replaced in turn by one of `values` ("Flux {} is outdated, the
// latest stable version is {}"); "" for a reason whose message is its cause.
std::string message(Reason reason, std::initializer_list<std::string_view> values = {});

}  // namespace fluxop
