#include "core/kustomize/target.h"

#include <algorithm>

#include "core/error.h"
#include "core/kustomize/scope.h"

namespace fluxop::kustomize {

namespace {

Pattern compile(const std::string& text, const Context& context, const std::string& field) {
  Pattern pattern{text, {}};
  if (text.empty()) return pattern;
  try {
    // kustomize's anchoring, pasted around the text as it is.
    pattern.regex = Regex(text, "^(?:", ")$");
  } catch (const Error& e) {
    context.fail(field, "invalid regular expression " + quote(text) + ": " + e.what());
  }
  return pattern;
}

LabelSelector selector(const std::string& text, const Context& context, const std::string& field) {
  try {
    return parse_label_selector(text);
  } catch (const Error& e) {
    context.fail(field, e.what());
  }
}

const yaml::Node& metadata_field(const Resource& resource, std::string_view key) {
  static const yaml::Node none;
  const yaml::Node* found = resource.object().find({"metadata", key});
  return found ? *found : none;
}

}  // namespace

std::string effective_namespace(const ResourceId& id) {
  if (is_cluster_scoped(id.gvk)) return "~X";
  return id.ns.empty() ? "default" : id.ns;
}

bool Pattern::matches(const std::string& value) const { return !regex || regex->search(value); }

Target make_target(const TargetSpec& spec, const Context& context, std::string_view field) {
  auto at = [&](std::string_view key) { return std::string(field) + "." + std::string(key); };
  return {compile(spec.group, context, at("group")),
          compile(spec.version, context, at("version")),
          compile(spec.kind, context, at("kind")),
          compile(spec.name, context, at("name")),
          compile(spec.ns, context, at("namespace")),
          selector(spec.label_selector, context, at("labelSelector")),
          selector(spec.annotation_selector, context, at("annotationSelector"))};
}

Target parse_target(const yaml::Node& node, const Context& context, std::string_view field) {
  static const std::pair<std::string_view, std::string TargetSpec::*> fields[] = {
      {"group", &TargetSpec::group},
      {"version", &TargetSpec::version},
      {"kind", &TargetSpec::kind},
      {"name", &TargetSpec::name},
      {"namespace", &TargetSpec::ns},
      {"labelSelector", &TargetSpec::label_selector},
      {"annotationSelector", &TargetSpec::annotation_selector},
  };
  if (!node.is_map()) {
    context.fail(field, "must be a map, not a " + std::string(yaml::kind_name(node)));
  }
  TargetSpec spec;
  for (const auto& entry : node.entries()) {
    const std::string& key = entry.first;
    const yaml::Node& value = entry.second;
    std::string path = std::string(field) + "." + key;
    auto known = std::find_if(std::begin(fields), std::end(fields),
                              [&](const auto& known_field) { return known_field.first == key; });
    if (known == std::end(fields)) {
      context.fail(path,
                   "unknown field (expected group, version, kind, name, namespace, "
                   "labelSelector or annotationSelector)");
    }
    if (!value.is_null() && !value.is_string()) context.fail(path, "must be a string");
    spec.*(known->second) = value.text();
  }
  return make_target(spec, context, field);
}

bool selects(const Target& target, const Resource& resource) {
  // Kind, group and version first: they rule out most resources, and
  // cheaply; the kind read where it is, before the id is put together
  // (instance patches are matched against every object of thousands of
  // shards).
  static const std::string no_kind;
  const yaml::Node* kind = resource.object().get("kind");
  if (!target.kind.matches(kind && kind->is_scalar() ? kind->text() : no_kind)) return false;
  ResourceId current = resource.id();
  if (!target.group.matches(current.gvk.group) || !target.version.matches(current.gvk.version)) {
    return false;
  }
  ResourceId original = resource.original_id();
  auto either = [](const Pattern& pattern, const std::string& a, const std::string& b) {
    return pattern.matches(a) || (b != a && pattern.matches(b));
  };
  return either(target.ns, effective_namespace(original), effective_namespace(current)) &&
         either(target.name, original.name, current.name) &&
         matches(target.labels, metadata_field(resource, "labels")) &&
         matches(target.annotations, metadata_field(resource, "annotations"));
}

}  // namespace fluxop::kustomize
