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
// Throws fluxop::Error "<field_location>: ..." when the path runs into a
// scalar or has an empty step.
void visit_fields(yaml::Node& object, const FieldSpec& spec,
                  const std::function<void(yaml::Node&)>& visit);

// "<Kind>/[<namespace>/]<name>: <path>", for errors about a field that
// `spec` reaches in `object`.
std::string field_location(const yaml::Node& object, const FieldSpec& spec);

// Adds `spec` unless an equivalent one (same path, gvk selecting the same
// objects) is there already; false when that one differs in `create`.
bool merge_fieldspec(FieldSpecs& specs, const FieldSpec& spec);

// Typed values of kustomization fields and transformer configs, read the
// way kustomize reads them (into Go strings and bools): null is "" or
// false, a date is the string as written, anything else is an error
// naming `field`.
std::string config_string(const yaml::Node& value, const Context& context, std::string_view field);
bool config_bool(const yaml::Node& value, const Context& context, std::string_view field);
// A value as "found ..." messages show it: "text" for strings, 1 or true
// for other scalars, "a map" or "a sequence".
std::string describe_value(const yaml::Node& value);

// kustomize reads the kustomization file strictly but transformer config
// files leniently, ignoring keys it does not know.
enum class UnknownKeys { Reject, Ignore };

// Reads a `fieldSpecs` list (items with group, version, kind, path, create);
// null reads as empty. Errors name `field` ("fieldSpecs[2].create").
FieldSpecs parse_fieldspecs(const yaml::Node& list, const Context& context, std::string_view field,
                            UnknownKeys unknown_keys = UnknownKeys::Reject);

}  // namespace fluxop::kustomize
