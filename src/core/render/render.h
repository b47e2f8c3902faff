// Rendering a FluxInstance into the objects of a Flux installation, as the
// upstream `flux-operator build instance` does: resolve the version, collect
// the inputs, run the kustomize engine, post-process.
#pragma once

#include <string>
#include <vector>

#include "core/distribution/distribution.h"
#include "core/instance/instance.h"
#include "core/yaml/node.h"

namespace fluxop::render {

struct Rendered {
  std::string version;   // the distribution directory used, e.g. "v2.9.4"
  std::string revision;  // "v2.9.4@sha256:<hex>", computed as upstream does; empty if not asked
  std::vector<yaml::Node> objects;  // in upstream's output order
};

struct RenderOptions {
  // The revision costs one more emission and digest of every object.
  bool revision = true;
};

// Throws fluxop::Error naming the instance file and field on any problem
// (no matching version, component not in that version, patch that does not
// apply, ...).
Rendered render(const instance::FluxInstance& flux, const distribution::Distribution& dist,
                const RenderOptions& options = {});

}  // namespace fluxop::render
