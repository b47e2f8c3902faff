// The `transformers` field, for kustomize's builtin label and annotation
// transformers configured in files or inline.
#pragma once

#include <vector>

#include "core/kustomize/context.h"
#include "core/kustomize/metadata_map.h"

namespace fluxop::kustomize {

// Each entry is a file path or an inline YAML string holding transformer
// configs (several documents allowed), `apiVersion: builtin` with kind
// LabelTransformer or AnnotationsTransformer. As in kustomize, inline
// configs run before those from files. Other kinds, plugins and directory
// entries are refused.
std::vector<MetadataPairs> read_transformers(const yaml::Node& field, const Context& context);

}  // namespace fluxop::kustomize
