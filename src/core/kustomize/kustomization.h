// Finding, reading and validating a kustomization file.
#pragma once

#include <string>

#include "core/kustomize/context.h"
#include "core/yaml/node.h"

namespace fluxop::kustomize {

struct Kustomization {
  Context context;  // its directory and file
  yaml::Node spec;  // the parsed file; top-level fields already checked
};

// Reads DIR/kustomization.yaml (or .yml, or Kustomization). Fields outside
// the supported subset are refused with an error naming the field.
Kustomization load_kustomization(const std::string& dir);

// True when DIR holds a kustomization file.
bool has_kustomization(const std::string& dir);

}  // namespace fluxop::kustomize
