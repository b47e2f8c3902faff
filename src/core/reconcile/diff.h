// `fluxopctl diff`: live objects against what apply would make of them,
// compared as YAML without the fields the API server owns, as a unified diff.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace fluxop::reconcile {

// The object without status, managed fields, resourceVersion, generation,
// uid, selfLink and timestamps.
nlohmann::json comparable(nlohmann::json object);

// Replaces Secret data/stringData values in both objects as kubectl diff
// does: "***" when equal, "*** (before)" / "*** (after)" when not.
void mask_secrets(nlohmann::json& before, nlohmann::json& after);

// A unified diff of two texts (3 lines of context); empty when equal. Plain
// text: the CLI colours it for a terminal (cli/color.h).
std::string unified_diff(const std::string& before, const std::string& after,
                         const std::string& before_label, const std::string& after_label);

}  // namespace fluxop::reconcile
