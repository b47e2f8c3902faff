#include "core/ssa/change_set.h"

namespace fluxop::ssa {

std::string_view action_name(Action action) {
  switch (action) {
    case Action::Created:
      return "created";
    case Action::Configured:
      return "configured";
    case Action::Unchanged:
      return "unchanged";
    case Action::Replaced:
      return "replaced";
    case Action::Deleted:
      return "deleted";
    case Action::Skipped:
      return "skipped";
  }
  return "unknown";
}

std::string change_line(const Change& change) {
  return display_name(change.ref) + " " + std::string(action_name(change.action));
}

nlohmann::json change_set_json(const std::vector<Change>& changes) {
  nlohmann::json out = nlohmann::json::array();
  for (const Change& change : changes) {
    out.push_back(
        {{"object", display_name(change.ref)},
         {"apiVersion", change.ref.group.empty() ? change.ref.version
                                                 : change.ref.group + "/" + change.ref.version},
         {"action", action_name(change.action)}});
  }
  return out;
}

}  // namespace fluxop::ssa
