// Writing the object model as YAML in the format of Go's sigs.k8s.io/yaml
// (what kubectl, kustomize and the flux-operator CLI print): keys sorted,
// 2-space indent, sequences not indented under their key, yaml.v2 quoting
// and line folding at 80 columns.
#pragma once

#include <string>
#include <vector>

#include "core/yaml/node.h"

namespace fluxop::yaml {

// One document, without a "---" marker. A document nested deeper than
// kMaxDepth (budget.h) is refused (fluxop::Error): printed, it would grow with
// the square of its depth.
std::string emit(const Node& document);
void emit_to(std::string& out, const Node& document);

// Documents joined by "---\n", as kustomize prints a resource list.
std::string emit_stream(const std::vector<Node>& documents);

}  // namespace fluxop::yaml
