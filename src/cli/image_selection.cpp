#include "cli/image_selection.h"

#include "cli/notice.h"
#include "cli/registry_flags.h"
#include "core/distribution/locate.h"

namespace fluxop::cli {

void add_image_selection_flags(CLI::App& command, ImageSelectionFlags& flags) {
  add_instance_flags(command, flags.input);
  command
      .add_option("--version", flags.range,
                  "Every Flux version of the distribution in this semver range (default: the "
                  "instance's version, else the newest)")
      ->option_text("RANGE");
  command
      .add_option("--variant", flags.variant,
                  "Image catalog variant: upstream-alpine, enterprise-alpine, "
                  "enterprise-distroless, enterprise-distroless-fips (default: the instance's, "
                  "else its registry's)")
      ->option_text("VARIANT");
}

SelectedImages select_images(const ImageSelectionFlags& flags) {
  const InstanceInput& input = flags.input;
  std::optional<instance::FluxInstance> flux;
  if (!input.file.empty() || !input.filename.empty()) flux = load_input(input);
  // Without FILE, the distribution is found as for an instance that names none.
  instance::FluxInstance located_for = flux ? *flux : instance::FluxInstance{};
  reconcile::RegistryArtifacts artifacts = registry_artifacts(input.registry);
  reconcile::RenderRequest request = render_request(input, /*revision=*/false);
  std::string artifact_digest;
  distribution::Distribution dist =
      reconcile::locate_distribution(artifacts, located_for, request, {}, artifact_digest);
  std::string artifact_url;
  if (distribution::is_oci_url(dist.root())) {
    std::optional<distribution::ArtifactSource> given =
        distribution::given_artifact(input.distribution_artifact, located_for, request.environment);
    artifact_url = given ? given->url : std::string(distribution::kDefaultArtifact);
  }
  std::vector<distribution::VersionImages> versions = distribution::selected_images(
      dist, {.instance = flux ? &*flux : nullptr, .range = flags.range, .variant = flags.variant});
  return {std::move(flux), std::move(dist), std::move(artifact_digest), std::move(artifact_url),
          std::move(versions)};
}

}  // namespace fluxop::cli
