// Whether a server-side apply would change anything, decided from the live
// object alone: the fields the field manager owns (its managedFields entry)
// are exactly the applied object's, and the live object holds the applied
// values. The engine then skips the request; where this cannot be decided
// (another API version, lists the walk cannot match, values the server
// normalises), the answer is false and a request decides.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace fluxop::ssa {

bool apply_is_noop(const nlohmann::json& object, const nlohmann::json& live,
                   std::string_view manager);

// `merged` (what the server makes of the object) without what the owner of
// `fields` owns and `object` does not set: what its apply will remove.
nlohmann::json without_unapplied(nlohmann::json merged, const nlohmann::json& fields,
                                 const nlohmann::json& object);

// The part of `live` that `fields` (a fieldsV1 tree, or the union of
// several) names: what its managers applied, without what the server
// defaulted or other writers set. The object's apiVersion, kind, name and
// namespace are kept.
nlohmann::json owned_part(const nlohmann::json& live, const nlohmann::json& fields);

// `live` with each value that is what the API server makes of the value
// `ours` has there (an atomic struct's defaults filled in, a quantity in
// canonical form: "1000m" is "1") written as ours writes it; the rest as
// it is. What the two then differ in differs in meaning.
nlohmann::json in_applied_form(nlohmann::json live, const nlohmann::json& ours);

// The union of two fieldsV1 trees.
void merge_fields(nlohmann::json& into, const nlohmann::json& fields);

// Whether a fieldsV1 node names a field within it ("." alone is the node
// itself: a leaf, or a map or list owned whole).
bool names_fields(const nlohmann::json& fields);

}  // namespace fluxop::ssa
