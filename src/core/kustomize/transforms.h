// A kustomization's transformations, read once into typed settings and
// applied in the order of kustomize's builtin transformers. A kustomization
// file is read into them; the renderer composes them in code.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/kustomize/context.h"
#include "core/kustomize/images.h"
#include "core/kustomize/metadata_map.h"
#include "core/kustomize/patches.h"
#include "core/kustomize/resource.h"
#include "core/yaml/node.h"

namespace fluxop::kustomize {

struct Transforms {
  std::vector<Patch> patches_strategic_merge{};
  std::vector<Patch> patches{};
  std::string ns{};
  std::string name_prefix{};
  std::string name_suffix{};
  std::vector<MetadataPairs> labels{};
  MetadataPairs common_labels{};
  MetadataPairs common_annotations{};
  std::vector<Patch> patches_json6902{};
  std::vector<ImageChange> images{};
  // The `transformers` field: builtin label and annotation transformers.
  std::vector<MetadataPairs> transformers{};
};

// The kustomization fields Transforms holds.
bool is_transform_field(std::string_view field);

// Reads every transform field of a kustomization (a map); errors name the
// field, e.g. `<file>: patches[1].target.kind: ...`.
Transforms read_transforms(const yaml::Node& kustomization, const Context& context);

void apply_transforms(ResourceList& resources, const Transforms& transforms,
                      const Context& context);

}  // namespace fluxop::kustomize
