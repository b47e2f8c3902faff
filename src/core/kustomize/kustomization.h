// Finding, reading and validating a kustomization file.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "core/kustomize/context.h"
#include "core/yaml/node.h"

namespace fluxop::kustomize {

struct Kustomization {
  Context context;  // its directory and file
  yaml::Node spec;  // the parsed file; top-level fields already checked
};

// Reads DIR/kustomization.yaml (or .yml, or Kustomization). Fields are the
// header, resources, sortOptions and those `is_transformer_field` accepts;
// the others are refused with an error naming the field.
Kustomization load_kustomization(const FileSystem& files, const std::string& dir,
                                 const std::function<bool(std::string_view)>& is_transformer_field);

}  // namespace fluxop::kustomize
