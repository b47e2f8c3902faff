// The patch transformers of a kustomization: `patches` (strategic merge or
// JSON 6902 patches, told apart by content, optionally with a target) and
// the deprecated `patchesStrategicMerge` and `patchesJson6902`.
#pragma once

#include "core/kustomize/context.h"
#include "core/kustomize/resource.h"
#include "core/yaml/node.h"

namespace fluxop::kustomize {

// `patches`: entries {path | patch, target, options: {allowNameChange,
// allowKindChange}}. A JSON patch needs a target. A strategic merge patch
// without a target applies to the one resource with its apiVersion, kind,
// name and namespace (current or previous); with a target, to every
// selected resource. Resources keep their name and kind unless the options
// allow a change, and always keep their namespace. `$patch: delete` removes
// the resource. A target selecting nothing is not an error.
void transform_patches(ResourceList& resources, const yaml::Node& field, const Context& context);

// `patchesStrategicMerge`: file paths or inline YAML, each holding one or
// more patches that apply as targetless strategic merge patches.
void transform_patches_strategic_merge(ResourceList& resources, const yaml::Node& field,
                                       const Context& context);

// `patchesJson6902`: entries {target (with a name), path | patch}.
void transform_patches_json6902(ResourceList& resources, const yaml::Node& field,
                                const Context& context);

}  // namespace fluxop::kustomize
