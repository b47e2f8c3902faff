#include <iostream>
#include <memory>

#include "cli/change_output.h"
#include "cli/commands.h"
#include "cli/registry_flags.h"
#include "core/oci/push.h"
#include "core/oci/registry_access.h"

namespace fluxop::cli {

namespace {

struct PushCommandOptions {
  std::string dir;
  std::string url;
  std::string source;
  std::string revision;
  RegistryFlags registry;
  std::string dry_run = "none";
};

void run_push(const PushCommandOptions& options) {
  oci::Reference ref = oci::Reference::parse(options.url);
  oci::PushOptions push;
  push.registry = oci::registry_options(options.registry, {});
  push.source = options.source;
  push.revision = options.revision;
  push.dry_run = options.dry_run != "none";
  oci::PushResult result = oci::push_distribution(options.dir, ref, push);
  if (push.dry_run) {
    std::cerr << "would push " << ref.str() << " (layer of " << result.layer_size
              << " bytes; dry run: nothing was sent to the registry)\n";
    std::cout << ref.pinned(result.digest) << "\n";
    return;
  }
  std::cerr << "pushed " << ref.str() << " (layer of " << result.layer_size << " bytes"
            << (result.layer_uploaded ? "" : ", already in the registry") << ")\n";
  std::cout << ref.pinned(result.digest) << "\n";
}

}  // namespace

void add_push_command(CLI::App& app) {
  auto options = std::make_shared<PushCommandOptions>();
  auto* cmd = app.add_subcommand(
      "push",
      "Push a distribution directory (flux/, flux-images/) to a registry as the Flux "
      "Operator's manifests artifact, e.g. to mirror it for an air-gapped site");
  cmd->add_option("DIR", options->dir, "The distribution directory")->required()->option_text(" ");
  cmd->add_option("URL", options->url, "oci://HOST[:PORT]/REPO:TAG")->required()->option_text(" ");
  cmd->add_option("--source", options->source,
                  "The org.opencontainers.image.source annotation (default file://DIR)")
      ->option_text("URL");
  cmd->add_option("--revision", options->revision,
                  "The org.opencontainers.image.revision annotation (default local@<digest of "
                  "the content>)")
      ->option_text("REV");
  add_registry_flags(*cmd, options->registry, /*offline=*/false);
  // Nothing a registry could check without a write: both modes pack and
  // print the digest, and send nothing.
  add_dry_run_flag(*cmd, options->dry_run);
  cmd->callback([options] { run_push(*options); });
}

}  // namespace fluxop::cli
