// What the kustomize unit tests share: resources from YAML text and back,
// kustomization contexts, and the checks a transformer's tests make.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "../memory_dir.h"
#include "core/error.h"
#include "core/kustomize/context.h"
#include "core/kustomize/resource.h"
#include "core/kustomize/transforms.h"
#include "core/yaml/emit.h"
#include "core/yaml/parse.h"

namespace fluxop::testing {

// The kustomization file in `dir`, for transformers that read its files.
inline kustomize::Context context_in(const MemoryDir& dir) {
  return {dir.str(), "kustomization.yaml", dir.files().get()};
}

// A kustomization for transformers that read no files: it has none.
inline const MemoryDir kNoFiles("/k");
inline const kustomize::Context kContext = context_in(kNoFiles);

inline yaml::Node yaml_of(std::string_view text) { return yaml::parse_document(text, "test"); }

// One kustomization field run alone, as a build runs it: read into typed
// transforms, then applied.
using Transformer = void (*)(kustomize::ResourceList& resources, const yaml::Node& field,
                             const kustomize::Context& context);

template <const char* Field>
void run_field(kustomize::ResourceList& resources, const yaml::Node& field,
               const kustomize::Context& context) {
  yaml::Node kustomization = yaml::Node::map();
  kustomization.set(Field, field);
  kustomize::apply_transforms(resources, kustomize::read_transforms(kustomization, context),
                              context);
}

inline constexpr char kPatches[] = "patches";
inline constexpr char kPatchesStrategicMerge[] = "patchesStrategicMerge";
inline constexpr char kPatchesJson6902[] = "patchesJson6902";
inline constexpr char kNamespace[] = "namespace";
inline constexpr char kNamePrefix[] = "namePrefix";
inline constexpr char kNameSuffix[] = "nameSuffix";
inline constexpr char kLabels[] = "labels";
inline constexpr char kCommonLabels[] = "commonLabels";
inline constexpr char kCommonAnnotations[] = "commonAnnotations";
inline constexpr char kImages[] = "images";
inline constexpr char kTransformers[] = "transformers";

inline constexpr Transformer transform_patches = run_field<kPatches>;
inline constexpr Transformer transform_patches_strategic_merge = run_field<kPatchesStrategicMerge>;
inline constexpr Transformer transform_patches_json6902 = run_field<kPatchesJson6902>;
inline constexpr Transformer transform_namespace = run_field<kNamespace>;
inline constexpr Transformer transform_name_prefix = run_field<kNamePrefix>;
inline constexpr Transformer transform_name_suffix = run_field<kNameSuffix>;
inline constexpr Transformer transform_labels = run_field<kLabels>;
inline constexpr Transformer transform_common_labels = run_field<kCommonLabels>;
inline constexpr Transformer transform_common_annotations = run_field<kCommonAnnotations>;
inline constexpr Transformer transform_images = run_field<kImages>;
inline constexpr Transformer transform_transformers = run_field<kTransformers>;

inline kustomize::ResourceList load(std::string_view text) {
  kustomize::ResourceList resources;
  for (auto& document : yaml::parse_documents(text, "resources.yaml")) {
    resources.emplace_back(std::move(document), "resources.yaml");
  }
  return resources;
}

inline std::string render(const kustomize::ResourceList& resources) {
  std::vector<yaml::Node> documents;
  for (const auto& resource : resources) documents.push_back(resource.object());
  return yaml::emit_stream(documents);
}

// The message of the fluxop::Error `action` throws, or "no error".
template <typename Action>
std::string error_message(Action&& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Runs `transform` with the kustomization field `field` (YAML text) over the
// resources in `input`; `expected` is `kubectl kustomize`'s rendering.
inline void check_transform(Transformer transform, std::string_view field, std::string_view input,
                            std::string_view expected,
                            const kustomize::Context& context = kContext) {
  kustomize::ResourceList resources = load(input);
  transform(resources, yaml_of(field), context);
  CHECK(render(resources) == expected);
}

inline void check_error(Transformer transform, std::string_view field, std::string_view input,
                        std::string_view message, const kustomize::Context& context = kContext) {
  kustomize::ResourceList resources = load(input);
  yaml::Node node = yaml_of(field);
  CHECK_THROWS_WITH_AS(transform(resources, node, context), std::string(message).c_str(), Error);
}

}  // namespace fluxop::testing
