// What an apply did to each object, reported as the Flux Operator reports it:
// `Deployment/flux-system/source-controller configured`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/kube/object.h"

namespace fluxop::ssa {

enum class Action {
  Created,
  Configured,
  Unchanged,
  Replaced,
  Deleted,
  Skipped,
  count,  // not an action: the number of them
};

std::string_view action_name(Action action);

struct Change {
  kube::ObjectKey ref;
  Action action;
};

// "<Kind>/<namespace>/<name> <action>".
std::string change_line(const Change& change);

// {"object": "<Kind>/<namespace>/<name>", "apiVersion": ...}: how -o json
// names an object.
nlohmann::json object_json(const kube::ObjectKey& ref);

// [{"object": ..., "action": ...}, ...] for -o json.
nlohmann::json change_set_json(const std::vector<Change>& changes);

}  // namespace fluxop::ssa
