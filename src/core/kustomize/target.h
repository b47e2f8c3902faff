// A patch target: which resources a patch applies to, by anchored regular
// expressions on group, version, kind, name and namespace and by label and
// annotation selectors, as kustomize selects them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/kustomize/context.h"
#include "core/kustomize/regex.h"
#include "core/kustomize/resource.h"
#include "core/kustomize/selector.h"
#include "core/yaml/node.h"

namespace fluxop::kustomize {

// A regular expression that must match a whole value; empty matches anything.
struct Pattern {
  std::string text;
  std::optional<Regex> regex;  // none for the empty text

  bool matches(const std::string& value) const;
};

struct Target {
  Pattern group;
  Pattern version;
  Pattern kind;
  Pattern name;
  Pattern ns;
  LabelSelector labels;
  LabelSelector annotations;
};

// A target as written: each field a regular expression or a selector; an
// empty one selects anything.
struct TargetSpec {
  std::string group{};
  std::string version{};
  std::string kind{};
  std::string name{};
  std::string ns{};
  std::string label_selector{};
  std::string annotation_selector{};
};

// Compiles a target; errors name `field` and the key, e.g.
// `.spec.kustomize.patches[0].target.name: invalid regular expression ...`.
Target make_target(const TargetSpec& spec, const Context& context, std::string_view field);

// Reads a target map {group, version, kind, name, namespace, labelSelector,
// annotationSelector}; errors name the field, e.g.
// `patches[0].target.name: invalid regular expression "(": missing )`.
Target parse_target(const yaml::Node& node, const Context& context, std::string_view field);

// kustomize's namespace for comparing ids: "default" when none is set, and
// the placeholder "~X" for cluster-scoped kinds.
std::string effective_namespace(const ResourceId& id);

// Name and namespace match the resource's current or original ones (before
// any prefix, suffix or namespace change); group, version, kind, labels and
// annotations the current ones. A namespaced resource without a namespace
// is in "default"; a cluster-scoped one is in kustomize's placeholder "~X",
// which only catch-all patterns like ".*" match.
bool selects(const Target& target, const Resource& resource);

}  // namespace fluxop::kustomize
