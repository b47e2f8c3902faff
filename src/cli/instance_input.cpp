#include "cli/instance_input.h"

#include <filesystem>
#include <iostream>

#include "core/distribution/locate.h"
#include "core/distribution/resolve.h"
#include "core/reconcile/apply.h"
#include "core/reconcile/status.h"

namespace fluxop::cli {

void add_instance_flags(CLI::App& command, InstanceInput& input) {
  auto* file = command.add_option("FILE", input.file, "FluxInstance YAML file ('-' for stdin)")
                   ->option_text(" ");
  command.add_option("-f,--filename", input.filename, "FluxInstance YAML file ('-' for stdin)")
      ->option_text("FILE")
      ->excludes(file);
  command
      .add_option("--distribution-artifact", input.distribution_artifact,
                  "Flux distribution: oci://HOST/REPO[:TAG|@DIGEST], a directory or file://DIR "
                  "(default: the instance's .spec.distribution.artifact, "
                  "FLUXOPCTL_DISTRIBUTION, what `fluxopctl pull` fetched, the cache)")
      ->option_text("URL|DIR");
  add_registry_flags(command, input.registry, /*offline=*/true);
  command.add_flag("--allow-unknown-fields", input.allow_unknown_fields,
                   "Warn about unknown fields of the FluxInstance instead of failing");
}

instance::FluxInstance load_input(const InstanceInput& input) {
  std::string path = input.filename.empty() ? input.file : input.filename;
  if (path.empty()) throw CLI::RequiredError("FILE or -f FILE");
  std::vector<std::string> warnings;
  instance::FluxInstance flux = instance::load_instance_file(
      path, {.allow_unknown_fields = input.allow_unknown_fields}, warnings);
  for (const std::string& warning : warnings) std::cerr << "warning: " << warning << "\n";
  return flux;
}

RenderedInstance render_loaded(const InstanceInput& input, instance::FluxInstance flux,
                               bool revision) {
  std::string artifact_digest;
  distribution::OciResolver pull = [&](std::string_view url, std::string_view origin) {
    try {
      oci::PullResult pulled = pull_url(url, origin, input.registry, input.notice);
      artifact_digest = pulled.artifact.digest;
      return oci::pulled_distribution(pulled);
    } catch (const Error& e) {
      // What the operator reports as ArtifactFailed, and retries.
      throw reconcile::ReconcileError(reconcile::kArtifactFailed, e.what());
    }
  };
  // What `fluxopctl pull` fetched last, without the network: a new machine
  // builds offline after one pull.
  distribution::PulledDefault pulled_default = [&]() -> std::optional<distribution::Distribution> {
    std::optional<oci::PullResult> pulled;
    try {
      pulled = pulled_default_artifact();
    } catch (const Error& e) {
      throw reconcile::ReconcileError(reconcile::kArtifactFailed, e.what());
    }
    if (!pulled) return std::nullopt;
    artifact_digest = pulled->artifact.digest;
    return oci::pulled_distribution(*pulled);
  };
  distribution::Distribution dist =
      distribution::locate(input.distribution_artifact, flux, distribution::Environment::current(),
                           pull, pulled_default);
  if (!input.version.empty()) {
    distribution::resolve_version(dist, input.version, "--version");
    flux.distribution.version = input.version;
  }
  render::Rendered rendered =
      render::render(flux, dist, {.revision = revision, .mode = input.mode});
  for (const std::string& warning : rendered.warnings) {
    if (input.notice)
      input.notice("warning: " + warning);
    else
      std::cerr << "warning: " << warning << "\n";
  }
  return {std::move(flux), std::move(dist), std::move(rendered), std::move(artifact_digest)};
}

RenderedInstance render_input(const InstanceInput& input, bool revision) {
  return render_loaded(input, load_input(input), revision);
}

void say_distribution(const RenderedInstance& instance) {
  const std::string& root = instance.distribution.root();
  std::cerr << "using distribution "
            << (root.starts_with("oci://")
                    ? root
                    : std::filesystem::absolute(root).lexically_normal().string())
            << " (Flux " << instance.rendered.version << ")\n";
}

}  // namespace fluxop::cli
