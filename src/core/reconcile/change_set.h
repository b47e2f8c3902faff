// What an apply did to each object, reported as the Flux Operator reports it:
// `Deployment/flux-system/source-controller configured`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/reconcile/inventory.h"

namespace fluxop::reconcile {

enum class Action { Created, Configured, Unchanged, Replaced, Deleted, Skipped };

std::string_view action_name(Action action);

struct Change {
  ObjectRef ref;
  Action action;
};

// "<Kind>/<namespace>/<name> <action>".
std::string change_line(const Change& change);

// [{"object": ..., "action": ...}, ...] for -o json.
nlohmann::json change_set_json(const std::vector<Change>& changes);

}  // namespace fluxop::reconcile
