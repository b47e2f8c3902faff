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

nlohmann::json object_json(const kube::ObjectKey& ref) {
  return {{"object", display_name(ref)},
          {"apiVersion", ref.group.empty() ? ref.version : ref.group + "/" + ref.version}};
}

nlohmann::json change_set_json(const std::vector<Change>& changes) {
  nlohmann::json out = nlohmann::json::array();
  for (const Change& change : changes) {
    nlohmann::json entry = object_json(change.ref);
    entry["action"] = action_name(change.action);
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace fluxop::ssa
