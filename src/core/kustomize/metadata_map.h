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

// Reads a map of strings (`commonLabels`, `labels[0].pairs`...); null reads
// as empty.
StringPairs parse_string_pairs(const yaml::Node& map, const Context& context,
                               std::string_view field);

// Sets every pair in each map the specs reach; errors name `field`.
void add_metadata_pairs(ResourceList& resources, const StringPairs& pairs, const FieldSpecs& specs,
                        const Context& context, std::string_view field);

// `commonLabels`: labels on metadata, templates and selectors.
void transform_common_labels(ResourceList& resources, const yaml::Node& field,
                             const Context& context);
// `labels`: a list of {pairs, includeSelectors, includeTemplates, fields};
// by default only metadata gets the pairs.
void transform_labels(ResourceList& resources, const yaml::Node& field, const Context& context);
// `commonAnnotations`: annotations on metadata and templates.
void transform_common_annotations(ResourceList& resources, const yaml::Node& field,
                                  const Context& context);

}  // namespace fluxop::kustomize
