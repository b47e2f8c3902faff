// The FluxInstance a command works on (build, apply, diff): FILE or -f, the
// distribution flags, and what the reconcile pipeline is asked to render.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/registry_flags.h"
#include "core/instance/instance.h"
#include "core/reconcile/pipeline.h"
#include "core/render/render.h"

namespace fluxop::cli {

struct InstanceInput {
  std::string file;
  std::string filename;  // -f
  std::string distribution_artifact;
  RegistryFlags registry;
  bool allow_unknown_fields = false;
  // diff --version: replaces .spec.distribution.version; errors name the flag.
  std::string version;
  // build: the CLI's rendering unless --operator; apply and diff: the
  // operator's, since they install what the operator would.
  render::Mode mode = render::Mode::cli;
  // The command's parse cache (main's), for the render.
  yaml::ParseCache* parse_cache = nullptr;
};

// FILE, -f/--filename, --distribution-artifact, --insecure-registry,
// --offline, --allow-unknown-fields.
void add_instance_flags(CLI::App& command, InstanceInput& input);

// --prune-crds (apply, diff, check): a CRD no longer rendered whose custom
// resources remain is deleted with them, instead of kept (README "What a
// prune takes").
void add_prune_crds_flag(CLI::App& command, bool& prune_crds);

using RenderedInstance = reconcile::RenderedInstance;

// Loads the instance; warnings go to stderr.
instance::FluxInstance load_input(const InstanceInput& input);

// What the flags ask the pipeline to render; its warnings go to stderr.
reconcile::RenderRequest render_request(const InstanceInput& input, bool revision);
// What a command that only reads the distribution (adopt, report -o html)
// asks the pipeline: --distribution-artifact's, the operator's mode.
reconcile::RenderRequest distribution_request(const std::string& artifact,
                                              yaml::ParseCache* parse_cache);

// Loads the instance and renders it, without a cluster (build).
RenderedInstance render_input(const InstanceInput& input, bool revision);

// "using distribution DIR (Flux vX.Y.Z)" on stderr.
void say_distribution(const RenderedInstance& instance);

}  // namespace fluxop::cli
