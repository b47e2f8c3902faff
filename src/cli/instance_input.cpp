#include "cli/instance_input.h"

#include <filesystem>
#include <iostream>

#include "cli/notice.h"
#include "core/distribution/locate.h"

namespace fluxop::cli {

void add_prune_crds_flag(CLI::App& command, bool& prune_crds) {
  command.add_flag("--prune-crds", prune_crds,
                   "Prune a CRD no longer installed even while custom resources of it remain: "
                   "they are deleted with it, their finalizers removed first (without it, the "
                   "CRD is kept and said)");
}

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
  for (const std::string& warning : warnings) print_warning(warning);
  return flux;
}

reconcile::RenderRequest render_request(const InstanceInput& input, bool revision) {
  return {.artifact = input.distribution_artifact,
          .version = input.version,
          .mode = input.mode,
          .revision = revision,
          .environment = distribution::Environment::current(),
          .notice = print_notice,
          .parse_cache = input.parse_cache};
}

reconcile::RenderRequest distribution_request(const std::string& artifact,
                                              yaml::ParseCache* parse_cache) {
  return {.artifact = artifact,
          .version = {},
          .mode = render::Mode::operator_controller,
          .revision = false,
          .environment = distribution::Environment::current(),
          .notice = print_notice,
          .parse_cache = parse_cache};
}

RenderedInstance render_input(const InstanceInput& input, bool revision) {
  reconcile::RegistryArtifacts artifacts = registry_artifacts(input.registry);
  return reconcile::render_instance(artifacts, load_input(input), render_request(input, revision));
}

void say_distribution(const RenderedInstance& instance) {
  const std::string& root = instance.distribution.root();
  std::cerr << "using distribution "
            << (distribution::is_oci_url(root)
                    ? root
                    : std::filesystem::absolute(root).lexically_normal().string())
            << " (Flux " << instance.rendered.version.original << ")\n";
}

}  // namespace fluxop::cli
