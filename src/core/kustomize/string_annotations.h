// kustomize rewrites every resource's annotations when it drops its own
// bookkeeping annotations at the end of a build: as a map of strings, and
// not at all when empty.
#pragma once

#include "core/kustomize/resource.h"

namespace fluxop::kustomize {

// Scalar values become their text as written (1 -> "1", null -> "null",
// an empty value -> ""), maps and sequences ""; an empty or null
// annotations field is removed.
void stringify_annotations(ResourceList& resources);

}  // namespace fluxop::kustomize
