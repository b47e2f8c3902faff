#include "core/kustomize/metadata_map.h"

#include "core/error.h"
#include "core/kustomize/builtin_fieldspecs.h"

namespace fluxop::kustomize {

namespace {

void add_pairs(yaml::Node& object, const FieldSpec& spec, const StringPairs& pairs) {
  visit_fields(object, spec, [&](yaml::Node& target) {
    if (target.is_null()) {
      if (!spec.create) return;
      target = yaml::Node::map();
    }
    if (!target.is_map()) {
      throw Error(field_location(object, spec) + ": expected a map, found " +
                  describe_value(target));
    }
    for (const auto& [key, value] : pairs) target.set(key, yaml::Node::string(value));
  });
}

// The field specs one `labels` entry applies to: its own, then kustomize's
// defaults for the parts it opts into.
FieldSpecs label_fieldspecs(const yaml::Node& entry, const Context& context,
                            const std::string& field) {
  FieldSpecs specs;
  bool selectors = false;
  bool templates = false;
  for (const auto& [key, value] : entry.entries()) {
    std::string key_field = field + "." + key;
    if (key == "includeSelectors") {
      selectors = config_bool(value, context, key_field);
    } else if (key == "includeTemplates") {
      templates = config_bool(value, context, key_field);
    } else if (key == "fields") {
      specs = parse_fieldspecs(value, context, key_field);
    } else if (key != "pairs") {
      context.fail(field, "unknown field \"" + key + "\"");
    }
  }
  FieldSpecs defaults = selectors   ? builtin_fieldspecs::common_labels()
                        : templates ? builtin_fieldspecs::template_labels()
                                    : FieldSpecs{};
  defaults.push_back({{}, "metadata/labels", true});
  for (const auto& spec : defaults) {
    if (!merge_fieldspec(specs, spec)) {
      context.fail(field + ".fields", "the field spec for " + spec.path +
                                          " conflicts with kustomize's default (create: " +
                                          (spec.create ? "true" : "false") + ")");
    }
  }
  return specs;
}

}  // namespace

StringPairs parse_string_pairs(const yaml::Node& map, const Context& context,
                               std::string_view field) {
  StringPairs pairs;
  if (map.is_null()) return pairs;
  if (!map.is_map()) context.fail(field, "expected a map, found " + describe_value(map));
  for (const auto& [key, value] : map.entries()) {
    // kustomize would set the map itself for an empty key, and fail.
    if (key.empty()) context.fail(field, "keys must not be empty");
    pairs.emplace_back(key, config_string(value, context, std::string(field) + "." + key));
  }
  return pairs;
}

void add_metadata(ResourceList& resources, const MetadataPairs& metadata, const Context& context) {
  if (metadata.pairs.empty()) return;
  for (auto& resource : resources) {
    for (const auto& spec : metadata.specs) {
      try {
        add_pairs(resource.object(), spec, metadata.pairs);
      } catch (const Error& error) {
        context.fail(metadata.field, error.what());
      }
    }
  }
}

MetadataPairs read_common_labels(const yaml::Node& field, const Context& context) {
  return {"commonLabels", parse_string_pairs(field, context, "commonLabels"),
          builtin_fieldspecs::common_labels()};
}

std::vector<MetadataPairs> read_labels(const yaml::Node& field, const Context& context) {
  std::vector<MetadataPairs> labels;
  if (field.is_null()) return labels;
  if (!field.is_sequence()) {
    context.fail("labels", "expected a sequence, found " + describe_value(field));
  }
  for (const yaml::Node& entry : field.items()) {
    std::string entry_field = "labels[" + std::to_string(labels.size()) + "]";
    if (!entry.is_map()) {
      context.fail(entry_field, "expected a map, found " + describe_value(entry));
    }
    FieldSpecs specs = label_fieldspecs(entry, context, entry_field);
    StringPairs pairs = parse_string_pairs(entry.get("pairs") ? *entry.get("pairs") : yaml::Node(),
                                           context, entry_field + ".pairs");
    labels.push_back({entry_field, std::move(pairs), std::move(specs)});
  }
  return labels;
}

MetadataPairs read_common_annotations(const yaml::Node& field, const Context& context) {
  return {"commonAnnotations", parse_string_pairs(field, context, "commonAnnotations"),
          builtin_fieldspecs::common_annotations()};
}

}  // namespace fluxop::kustomize
