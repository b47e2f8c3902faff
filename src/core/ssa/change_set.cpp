#include "core/ssa/change_set.h"

#include "core/enum_table.h"

namespace fluxop::ssa {

namespace {

constexpr EnumName<Action> kActions[] = {
    {Action::Created, "created"},     {Action::Configured, "configured"},
    {Action::Unchanged, "unchanged"}, {Action::Replaced, "replaced"},
    {Action::Deleted, "deleted"},     {Action::Skipped, "skipped"},
};
static_assert(covers_enum(kActions));

}  // namespace

std::string_view action_name(Action action) { return enum_row(kActions, action).name; }

std::string change_line(const Change& change) {
  return display_name(change.ref) + " " + std::string(action_name(change.action));
}

nlohmann::json object_json(const kube::ObjectKey& ref) {
  return {{"object", display_name(ref)}, {"apiVersion", kube::api_version(ref)}};
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
