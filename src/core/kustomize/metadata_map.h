// Labels and annotations: string maps merged into the map fields that
// field specs locate (metadata, templates, selectors).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/kustomize/context.h"
#include "core/kustomize/fieldspec.h"

namespace fluxop::kustomize {

using StringPairs = std::vector<std::pair<std::string, std::string>>;

// Pairs to set in the map fields the specs reach; `field` names them in
// errors.
struct MetadataPairs {
  std::string field;
  StringPairs pairs;
  FieldSpecs specs;
};

// Reads a map of strings (`commonLabels`, `labels[0].pairs`...); null reads
// as empty.
StringPairs parse_string_pairs(const yaml::Node& map, const Context& context,
                               std::string_view field);

// Sets every pair in each map the specs reach.
void add_metadata(ResourceList& resources, const MetadataPairs& metadata, const Context& context);

// `commonLabels`: labels on metadata, templates and selectors.
MetadataPairs read_common_labels(const yaml::Node& field, const Context& context);
// `labels`: a list of {pairs, includeSelectors, includeTemplates, fields};
// by default only metadata gets the pairs.
std::vector<MetadataPairs> read_labels(const yaml::Node& field, const Context& context);
// `commonAnnotations`: annotations on metadata and templates.
MetadataPairs read_common_annotations(const yaml::Node& field, const Context& context);

}  // namespace fluxop::kustomize
