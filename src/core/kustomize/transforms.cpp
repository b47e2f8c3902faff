#include "core/kustomize/transforms.h"

#include <algorithm>
#include <array>

#include "core/kustomize/builtin_transformers.h"
#include "core/kustomize/fieldspec.h"
#include "core/kustomize/name_affix.h"
#include "core/kustomize/namespace.h"

namespace fluxop::kustomize {

namespace {

constexpr std::array<std::string_view, 11> kFields = {
    "patchesStrategicMerge",
    "patches",
    "namespace",
    "namePrefix",
    "nameSuffix",
    "labels",
    "commonLabels",
    "commonAnnotations",
    "patchesJson6902",
    "images",
    "transformers",
};

}  // namespace

bool is_transform_field(std::string_view field) {
  return std::find(kFields.begin(), kFields.end(), field) != kFields.end();
}

Transforms read_transforms(const yaml::Node& kustomization, const Context& context) {
  static const yaml::Node absent;
  auto field = [&](std::string_view name) -> const yaml::Node& {
    const yaml::Node* found = kustomization.get(name);
    return found ? *found : absent;
  };
  Transforms transforms;
  transforms.patches_strategic_merge =
      read_patches_strategic_merge(field("patchesStrategicMerge"), context);
  transforms.patches = read_patches(field("patches"), context);
  transforms.ns = config_string(field("namespace"), context, "namespace");
  transforms.name_prefix = config_string(field("namePrefix"), context, "namePrefix");
  transforms.name_suffix = config_string(field("nameSuffix"), context, "nameSuffix");
  transforms.labels = read_labels(field("labels"), context);
  transforms.common_labels = read_common_labels(field("commonLabels"), context);
  transforms.common_annotations = read_common_annotations(field("commonAnnotations"), context);
  transforms.patches_json6902 = read_patches_json6902(field("patchesJson6902"), context);
  transforms.images = read_images(field("images"), context);
  transforms.transformers = read_transformers(field("transformers"), context);
  return transforms;
}

void apply_transforms(ResourceList& resources, const Transforms& transforms,
                      const Context& context) {
  for (const Patch& patch : transforms.patches_strategic_merge) {
    apply_patch(resources, patch, context);
  }
  for (const Patch& patch : transforms.patches) apply_patch(resources, patch, context);
  set_namespace(resources, transforms.ns, context);
  // Two renames, as kustomize's two transformers make them: each is
  // remembered for name references.
  add_name_affixes(resources, transforms.name_prefix, "");
  add_name_affixes(resources, "", transforms.name_suffix);
  for (const MetadataPairs& labels : transforms.labels) add_metadata(resources, labels, context);
  add_metadata(resources, transforms.common_labels, context);
  add_metadata(resources, transforms.common_annotations, context);
  for (const Patch& patch : transforms.patches_json6902) apply_patch(resources, patch, context);
  change_images(resources, transforms.images, context);
  for (const MetadataPairs& config : transforms.transformers) {
    add_metadata(resources, config, context);
  }
}

}  // namespace fluxop::kustomize
