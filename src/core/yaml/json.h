// Conversion between the object model and JSON (the API server's format).
#pragma once

#include <nlohmann/json.hpp>

#include "core/yaml/node.h"

namespace fluxop::yaml {

// Ints and floats become JSON numbers, timestamps RFC 3339 strings. A node
// nested deeper than kMaxDepth (budget.h) is refused (fluxop::Error).
nlohmann::ordered_json to_json(const Node& node);
Node from_json(const nlohmann::ordered_json& json);

// The same as to_json, with sorted keys: the form the Kubernetes client and
// the reconciler work in.
nlohmann::json to_sorted_json(const Node& node);

}  // namespace fluxop::yaml
