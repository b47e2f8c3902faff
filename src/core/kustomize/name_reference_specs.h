// Which fields of which kinds hold the name of another resource, as
// kustomize knows them.
#pragma once

#include <vector>

#include "core/kustomize/fieldspec.h"
#include "core/kustomize/resource.h"

namespace fluxop::kustomize {

// Resources of kind `target` are named by the `referrers` fields.
struct NameBackReference {
  Gvk target;  // empty parts match anything
  FieldSpecs referrers;
};

// kustomize v5.5.0's default nameReference configuration.
const std::vector<NameBackReference>& default_name_references();

}  // namespace fluxop::kustomize
