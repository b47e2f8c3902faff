// Objects compared: without the fields the API server owns, field by field
// (JSON Pointers), or as texts in a unified diff; for `fluxopctl diff`
// (reconcile/instance_diff.h) and `adopt` (what a user changed of a render).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace fluxop::ssa {

// The object without status, managed fields, resourceVersion, generation,
// uid, selfLink and timestamps.
nlohmann::json comparable(nlohmann::json object);

// Replaces Secret data/stringData values in both objects as kubectl diff
// does: "***" when equal, "*** (before)" / "*** (after)" when not.
void mask_secrets(nlohmann::json& before, nlohmann::json& after);

// A field whose value differs between two objects: where it is, as a JSON
// Pointer (RFC 6901: "/spec/replicas", "/metadata/labels/a~1b" for the key
// "a/b"), and its value on each side, absent on the side without the field.
struct FieldChange {
  std::string path;
  std::optional<nlohmann::json> before, after;
};

// The fields that differ, in key order: maps compared key by
// key, lists of the same length item by item; a list whose length changes,
// or a value whose type does, is one change of the whole value. Equal
// objects give none.
std::vector<FieldChange> field_changes(const nlohmann::json& before, const nlohmann::json& after);

// A unified diff of two texts (3 lines of context); empty when equal. Plain
// text: the CLI colours it for a terminal (cli/color.h).
std::string unified_diff(const std::string& before, const std::string& after,
                         const std::string& before_label, const std::string& after_label);

}  // namespace fluxop::ssa
