// The order and metadata of `build instance`'s output: objects sorted as the
// Flux server-side apply machinery applies them, then the instance's common
// labels and annotations set on each.
#pragma once

#include <vector>

#include "core/instance/instance.h"
#include "core/yaml/node.h"

namespace fluxop::render {

// CRDs, namespaces and other kinds that must exist first, in a fixed order;
// then kinds not listed, by group and kind; webhook configurations last.
// Within a kind: by namespace, then name.
void sort_for_apply(std::vector<yaml::Node>& objects);

// Adds (or overwrites) labels and annotations on every object, creating the
// maps only when something is added.
void set_metadata(std::vector<yaml::Node>& objects, const instance::StringMap& labels,
                  const instance::StringMap& annotations);

}  // namespace fluxop::render
