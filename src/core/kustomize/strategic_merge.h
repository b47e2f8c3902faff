// Strategic merge patches, merged the way kustomize v5.5.0 merges them
// (kyaml's merge2 with list items from the patch placed first): maps merge
// key by key, `null` deletes, lists the schema marks as merged are merged by
// their merge keys and every other list is replaced, `$patch:
// delete|replace|merge` directives apply to maps and lists. Other SMP
// directives ($retainKeys, $setElementOrder/..., $deleteFromPrimitiveList/...)
// are not understood by kustomize and are kept as ordinary fields.
#pragma once

#include "core/yaml/node.h"

namespace fluxop::kustomize {

// Applies `patch` to `target` (both whole objects) with strategic-merge semantics.
// Returns false when the patch deletes the whole object (top-level `$patch: delete`,
// or a result that is empty); `target` is then unspecified, as it is after a throw.
// Throws fluxop::Error with a one-line message naming the field path on a malformed patch
// (e.g. "spec.template.spec.containers: expected a sequence, got map").
// Does not restore the target's name, namespace or kind: kustomize's callers do that.
[[nodiscard]] bool apply_strategic_merge(yaml::Node& target, const yaml::Node& patch);

}  // namespace fluxop::kustomize
