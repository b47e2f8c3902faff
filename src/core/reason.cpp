#include "core/reason.h"

#include <array>

namespace fluxop {

namespace {

struct ReasonField {
  Reason reason;
  std::string_view name;
  EventType type;
  std::string_view message;  // "{}" for each value the message takes
};

// Indexed by Reason: the static_assert below checks that each row is at its
// reason's index and that every reason has one.
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

constexpr bool covers_in_order() {
  for (std::size_t i = 0; i < std::size(kReasons); ++i) {
    if (static_cast<std::size_t>(kReasons[i].reason) != i || kReasons[i].name.empty()) return false;
  }
  return std::size(kReasons) == static_cast<std::size_t>(Reason::count);
}
static_assert(covers_in_order(), "kReasons: one row per Reason, in the enum's order");

constexpr bool names_unique() {
  for (std::size_t i = 0; i < std::size(kReasons); ++i) {
    for (std::size_t j = i + 1; j < std::size(kReasons); ++j) {
      if (kReasons[i].name == kReasons[j].name) return false;
    }
  }
  return true;
}
static_assert(names_unique(), "kReasons: each name once");
static_assert(std::size(kEventTypes) == static_cast<std::size_t>(EventType::count),
              "kEventTypes: one name per EventType");

const ReasonField& field(Reason reason) { return kReasons[static_cast<std::size_t>(reason)]; }

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
