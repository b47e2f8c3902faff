// Rendering a FluxInstance into the objects of a Flux installation: resolve
// the version, collect the inputs, run the kustomize engine, post-process;
// as the upstream CLI (`flux-operator build instance`) renders it, or as the
// in-cluster operator does.
#pragma once

#include <string>
#include <vector>

#include "core/distribution/distribution.h"
#include "core/instance/instance.h"
#include "core/yaml/node.h"
#include "core/yaml/parse_cache.h"

namespace fluxop::render {

struct Rendered {
  distribution::Version version;  // resolved; its original: the directory used, e.g. "v2.9.4"
  std::string revision;  // "v2.9.4@sha256:<hex>", computed as upstream does; empty if not asked
  std::vector<yaml::Node> objects;    // in upstream's output order
  std::vector<std::string> warnings;  // e.g. images not pinned by digest, and why
};

// Where the CLI and the operator differ, each renders as its upstream
// counterpart does:
// - images: the CLI uses the manifests' tags; the operator pins them by the
//   digests of the variant's image catalog (flux-images/<version>/
//   <variant>.yaml, the variant from .spec.distribution.variant or the
//   registry), falling back to the tags with a warning when none fits;
// - network policies: the CLI reads a .spec.cluster without networkPolicy as
//   false, the operator gets the CRD's default, true;
// - sharding.storage persistent: only the operator gives each shard's
//   source-controller a PersistentVolumeClaim;
// - the operator refuses a sync its Flux version cannot run (provider aws of
//   a GitRepository before Flux 2.9).
enum class Mode { cli, operator_controller };

struct RenderOptions {
  // The revision costs one more emission and digest of every object.
  bool revision = true;
  Mode mode = Mode::cli;
  // Where the distribution's manifests are parsed through: the caller
  // commits it once what it rendered is used, or discards it. None: parsed.
  yaml::ParseCache* parse_cache = nullptr;
};

// "<version>@sha256:<hex>": the revision of `objects` rendered for `version`,
// the digest of their YAML stream.
std::string revision_of(const std::string& version, const std::vector<yaml::Node>& objects);

// Throws fluxop::Error naming the instance file and field on any problem
// (no matching version, component not in that version, patch that does not
// apply, ...).
Rendered render(const instance::FluxInstance& flux, const distribution::Distribution& dist,
                const RenderOptions& options = {});

}  // namespace fluxop::render
