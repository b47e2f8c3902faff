// The FluxInstance that a bootstrap installation's objects describe: its
// version from their labels, registry from their images, components from
// the controllers present, cluster settings from the controllers' arguments
// and the NetworkPolicies, sync from the source and Kustomization bootstrap
// wrote.
#pragma once

#include <string>
#include <vector>

#include "core/yaml/node.h"

namespace fluxop::adopt {

struct Inferred {
  yaml::Node document;  // the FluxInstance, without patches
  std::string version;  // the exact version installed, as its labels say ("v2.9.4")
  std::string ns;       // the installation's namespace
};

// Throws fluxop::Error "<origin>: <what>" when the objects hold no Flux
// controller, two installations, no version label or two versions.
Inferred infer_instance(const std::vector<yaml::Node>& objects, const std::string& origin);

}  // namespace fluxop::adopt
