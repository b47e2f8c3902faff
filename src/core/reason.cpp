#include "core/reason.h"

#include "core/enum_table.h"

namespace fluxop {

namespace {

struct ReasonField {
  Reason value;
  std::string_view name;
  EventType type;
  std::string_view message;  // "{}" for each value the message takes
};

// Indexed by Reason (core/enum_table.h).
constexpr ReasonField kReasons[] = {
    {Reason::progressing, "Progressing", EventType::normal, ""},
    {Reason::reconciliation_succeeded, "ReconciliationSucceeded", EventType::normal,
     "Reconciliation finished in {}"},
    {Reason::reconciliation_disabled, "ReconciliationDisabled", EventType::warning,
     "Reconciliation is disabled"},
    {Reason::reconciliation_failed, "ReconciliationFailed", EventType::warning, ""},
    {Reason::health_check_failed, "HealthCheckFailed", EventType::warning, ""},
    {Reason::health_check_canceled, "HealthCheckCanceled", EventType::none, ""},
    {Reason::build_failed, "BuildFailed", EventType::warning, ""},
    {Reason::artifact_failed, "ArtifactFailed", EventType::warning, ""},
    {Reason::outdated_version, "OutdatedVersion", EventType::normal,
     "Flux {} is outdated, the latest stable version is {}"},
    {Reason::prune_skipped, "PruneSkipped", EventType::warning, ""},
    {Reason::controller_conflict, "ControllerConflict", EventType::warning, ""},
    {Reason::uninstalling, "Uninstalling", EventType::none, ""},
};

constexpr std::string_view kEventTypes[] = {"", "Normal", "Warning"};

static_assert(covers_enum(kReasons),
              "kReasons: one row per Reason, in the enum's order, each name once");
static_assert(std::size(kEventTypes) == static_cast<std::size_t>(EventType::count),
              "kEventTypes: one name per EventType");

const ReasonField& field(Reason reason) { return enum_row(kReasons, reason); }

}  // namespace

std::string_view name(Reason reason) { return field(reason).name; }

std::string_view name(EventType type) { return kEventTypes[static_cast<std::size_t>(type)]; }

EventType event_type(Reason reason) { return field(reason).type; }

std::string message(Reason reason, std::initializer_list<std::string_view> values) {
  std::string_view shape = field(reason).message;
  std::string text;
  const std::string_view* value = values.begin();
  for (std::size_t at = 0;;) {
    std::size_t hole = shape.find("{}", at);
    if (hole == std::string_view::npos || value == values.end()) {
      text += shape.substr(at);
      return text;
    }
    text += shape.substr(at, hole - at);
    text += *value++;
    at = hole + 2;
  }
}

}  // namespace fluxop
