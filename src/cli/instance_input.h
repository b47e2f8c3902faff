// The FluxInstance a command works on (build, apply, diff): FILE or -f, the
// distribution flags, and rendering it.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "cli/registry_flags.h"
#include "core/distribution/distribution.h"
#include "core/instance/instance.h"
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
  // Where the render's warnings and the pull's notices go; stderr when empty
  // (the daemon logs them).
  std::function<void(const std::string&)> notice;
};

// FILE, -f/--filename, --distribution-artifact, --insecure-registry,
// --offline, --allow-unknown-fields.
void add_instance_flags(CLI::App& command, InstanceInput& input);

struct RenderedInstance {
  instance::FluxInstance flux;
  distribution::Distribution distribution;
  render::Rendered rendered;
  std::string artifact_digest;  // of the OCI artifact's manifest, when one was pulled
};

// Loads the instance; warnings go to stderr.
instance::FluxInstance load_input(const InstanceInput& input);

// Finds the instance's distribution and renders it; the render's warnings
// go to stderr.
RenderedInstance render_loaded(const InstanceInput& input, instance::FluxInstance flux,
                               bool revision);

// Both.
RenderedInstance render_input(const InstanceInput& input, bool revision);

// "using distribution DIR (Flux vX.Y.Z)" on stderr.
void say_distribution(const RenderedInstance& instance);

}  // namespace fluxop::cli
