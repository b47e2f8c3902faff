// Field specs: where in which kinds of objects a transformer finds the
// fields it changes (labels, namespaces, images, name references...), as in
// kustomize's transformer configurations.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/kustomize/context.h"
#include "core/kustomize/resource.h"
#include "core/yaml/node.h"

namespace fluxop::kustomize {

struct FieldSpec {
  Gvk gvk;           // empty parts match anything
  std::string path;  // "/"-separated map keys, "\/" for a "/" inside a key;
                     // a "[]" suffix marks a key holding a sequence
  bool create = false;
};

using FieldSpecs = std::vector<FieldSpec>;

bool selects(const FieldSpec& spec, const Gvk& gvk);

// Calls visit(node) for every node spec.path reaches in `object`, when spec
// selects the object's gvk. Sequences met on the way are entered item by
// item without a path step of their own. A null reached on the way ends that
// branch; the leaf is visited even when null. With spec.create, missing or
// null maps on the way are created and a missing leaf is added as null for
// the visitor to fill. A "[]" step is never created, but a null there turns
// into an empty sequence, as kustomize leaves it.
// Throws fluxop::Error "<Kind>/<name>: <path>: ..." when the path runs into
// a scalar or has an empty step.
void visit_fields(yaml::Node& object, const FieldSpec& spec,
                  const std::function<void(yaml::Node&)>& visit);

// kustomize reads the kustomization file strictly but transformer config
// files leniently, ignoring keys it does not know.
enum class UnknownKeys { Reject, Ignore };

// Reads a `fieldSpecs` list (items with group, version, kind, path, create);
// null reads as empty. Errors name `field` ("fieldSpecs[2].create").
FieldSpecs parse_fieldspecs(const yaml::Node& list, const Context& context, std::string_view field,
                            UnknownKeys unknown_keys = UnknownKeys::Reject);

}  // namespace fluxop::kustomize
