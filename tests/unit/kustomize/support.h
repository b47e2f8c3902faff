// What the kustomize unit tests share: resources from YAML text and back,
// kustomization contexts, and the checks a transformer's tests make.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "../temp_dir.h"
#include "core/error.h"
#include "core/kustomize/context.h"
#include "core/kustomize/resource.h"
#include "core/yaml/emit.h"
#include "core/yaml/parse.h"

namespace fluxop::testing {

// A kustomization for transformers that read no files.
inline const kustomize::Context kContext{"/tmp", "kustomization.yaml"};

// The kustomization file in `dir`, for transformers that read its files.
inline kustomize::Context context_in(const TempDir& dir) {
  return {dir.str(), "kustomization.yaml"};
}

inline yaml::Node yaml_of(std::string_view text) { return yaml::parse_document(text, "test"); }

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
inline void check_transform(kustomize::Transformer transform, std::string_view field,
                            std::string_view input, std::string_view expected,
                            const kustomize::Context& context = kContext) {
  kustomize::ResourceList resources = load(input);
  transform(resources, yaml_of(field), context);
  CHECK(render(resources) == expected);
}

inline void check_error(kustomize::Transformer transform, std::string_view field,
                        std::string_view input, std::string_view message,
                        const kustomize::Context& context = kContext) {
  kustomize::ResourceList resources = load(input);
  yaml::Node node = yaml_of(field);
  CHECK_THROWS_WITH_AS(transform(resources, node, context), std::string(message).c_str(), Error);
}

}  // namespace fluxop::testing
