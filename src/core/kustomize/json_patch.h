// RFC 6902 JSON patches applied to the object model, with the leniencies of
// the JSON patch library kustomize uses, so that every patch kustomize
// accepts gives the same result here.
#pragma once

#include "core/yaml/budget.h"
#include "core/yaml/node.h"

namespace fluxop::kustomize {

// Applies `operations` (a sequence of {op, path, from, value} maps; null for
// none) to `target` in order. Beyond RFC 6902, as kustomize: array indices
// may be signed (negative ones count from the end) or have leading zeros,
// `replace` of a missing map key adds it, a missing `value` means null, and
// `copy` from a missing map key copies null.
// Throws fluxop::Error naming the operation, e.g.
// "[2] replace /spec/replicass/x: path not found". Every value an operation
// inserts (added, replaced or copied) is charged to `budget` first, and a
// move may not nest the document past yaml::kMaxDepth.
void apply_json_patch(yaml::Node& target, const yaml::Node& operations, yaml::NodeBudget& budget);

}  // namespace fluxop::kustomize
