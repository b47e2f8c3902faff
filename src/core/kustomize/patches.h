// The patch transformers of a kustomization: `patches` (strategic merge or
// JSON 6902 patches, told apart by content, optionally with a target) and
// the deprecated `patchesStrategicMerge` and `patchesJson6902`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/kustomize/context.h"
#include "core/kustomize/resource.h"
#include "core/kustomize/target.h"
#include "core/yaml/node.h"

namespace fluxop::kustomize {

struct PatchOptions {
  bool allow_name_change = false;
  bool allow_kind_change = false;
};

// One patch, read and checked: either JSON 6902 operations, which need a
// target, or strategic merge patches. A strategic merge patch without a
// target applies to the one resource with its apiVersion, kind, name and
// namespace (current or previous); with a target, to every selected
// resource. Resources keep their name and kind unless the options allow a
// change, and always keep their namespace. `$patch: delete` removes the
// resource. A target selecting nothing is not an error.
struct Patch {
  std::string field;  // names the patch in errors: "patches[2]"
  std::optional<Target> target{};
  std::optional<yaml::Node> operations{};
  std::vector<yaml::Node> merges{};
  PatchOptions options{};
  // A `patches` JSON patch records each resource's id first so that it may
  // rename it; `patchesJson6902` does not.
  bool stores_id = true;
};

// A patch from its text, told apart as kustomize does: a JSON patch when
// the text starts with "[" or its first YAML document is a list, else
// strategic merge patches. `source` names the text in YAML errors.
Patch read_patch(std::string field, std::string_view text, const std::string& source,
                 std::optional<Target> target, const Context& context, PatchOptions options = {});

void apply_patch(ResourceList& resources, const Patch& patch, const Context& context);

// `patches`: entries {path | patch, target, options: {allowNameChange,
// allowKindChange}}.
std::vector<Patch> read_patches(const yaml::Node& field, const Context& context);
// `patchesStrategicMerge`: file paths or inline YAML, each holding one or
// more patches that apply as targetless strategic merge patches.
std::vector<Patch> read_patches_strategic_merge(const yaml::Node& field, const Context& context);
// `patchesJson6902`: entries {target (with a name), path | patch}.
std::vector<Patch> read_patches_json6902(const yaml::Node& field, const Context& context);

}  // namespace fluxop::kustomize
