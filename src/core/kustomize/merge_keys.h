// Which lists kustomize merges element by element in a strategic merge
// patch: the lists whose OpenAPI patch strategy includes "merge", as the
// schema built into kustomize v5.5.0 (Kubernetes v1.21.2) declares them.
// Every other list is replaced whole.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fluxop::kustomize {

// The merge keys of the list at `path` in objects of `api_version`/`kind`;
// empty for a list of scalars merged as a set (e.g. finalizers); nullopt
// when the list is replaced whole. `path` is the dotted field names from the
// object root; list elements add no segment ("spec.containers.ports").
std::optional<std::vector<std::string>> merge_keys(std::string_view api_version,
                                                   std::string_view kind, std::string_view path);

// True when kustomize has a built-in schema for the type.
bool has_builtin_schema(std::string_view api_version, std::string_view kind);

}  // namespace fluxop::kustomize
