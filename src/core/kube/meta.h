// Typed lookups on an object as the API server sends it (JSON): one set for
// every layer that reads objects (kube, ssa, reconcile, report, daemon). A
// field of another type than the one asked for is absent, as unstructured's
// Nested* accessors find it: what a peer sent never throws in the middle of
// a reading.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace fluxop::kube {

// The value at the JSON pointer (RFC 6901, "/metadata/name"); null when a
// step is missing or the pointer is malformed.
const nlohmann::json* at(const nlohmann::json& object, std::string_view pointer);
std::optional<std::string> string_at(const nlohmann::json& object, std::string_view pointer);
// The string at the pointer, or "".
std::string text_at(const nlohmann::json& object, std::string_view pointer);
std::optional<std::int64_t> integer_at(const nlohmann::json& object, std::string_view pointer);
// The boolean at the pointer is true.
bool true_at(const nlohmann::json& object, std::string_view pointer);
// The array at the pointer, or an empty one.
const nlohmann::json& array_at(const nlohmann::json& object, std::string_view pointer);

// The string members of the object at the pointer (a label selector's
// matchLabels), or none.
std::map<std::string, std::string> string_map_at(const nlohmann::json& object,
                                                 std::string_view pointer);

// A member by its name, which may hold "/" (a label's key): its string, or "".
std::string string_member(const nlohmann::json& object, std::string_view key);

// The condition of `type` in .status.conditions (the first object of that
// type), or null.
const nlohmann::json* condition_at(const nlohmann::json& object, std::string_view type);

// RFC 6901: a key as one token of a pointer ("~" is "~0", "/" is "~1").
std::string pointer_token(std::string_view key);

// ASCII letters compared without their case (Go's strings.EqualFold on the
// values Kubernetes metadata holds).
bool equal_fold(std::string_view a, std::string_view b);

// The label or annotation `key` of the object says `value` (not empty), in
// any case: how
// the operator's reporter finds a suspended reconciler and fluxcd/pkg's ssa
// an object excluded from a prune (`prune: disabled`).
bool any_in_metadata(const nlohmann::json& object, std::string_view key, std::string_view value);

// The annotation `key` says `value`, in any case: how the operator decides a
// FluxInstance's reconciliation is disabled (annotations only).
bool annotation_is(const nlohmann::json& object, std::string_view key, std::string_view value);

}  // namespace fluxop::kube
