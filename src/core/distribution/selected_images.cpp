#include "core/distribution/selected_images.h"

#include "core/distribution/resolve.h"

namespace fluxop::distribution {

std::vector<VersionImages> selected_images(const Distribution& distribution,
                                           const ImageSelection& selection) {
  const instance::FluxInstance* flux = selection.instance;
  std::vector<Version> versions;
  if (!selection.range.empty()) {
    versions = matching_versions(distribution, selection.range, "--version");
  } else {
    // The operator's default version is "*": the newest stable one.
    versions.push_back(resolve_version(distribution, flux ? flux->distribution.version : "*"));
  }
  std::string registry = flux ? flux->distribution.registry : "ghcr.io/fluxcd";
  std::string variant = selection.variant.empty()
                            ? catalog_variant(registry, flux ? flux->distribution.variant : "")
                            : catalog_variant(registry, selection.variant, "--variant");
  std::vector<std::string> components;
  if (flux) components = flux->components;
  std::vector<VersionImages> selected;
  for (Version& version : versions) {
    std::vector<CatalogImage> images = catalog_entries(distribution, version, variant, components);
    selected.push_back({std::move(version), variant, std::move(images)});
  }
  return selected;
}

std::string installed_name(const CatalogImage& image, const instance::FluxInstance* instance) {
  if (!instance) return image.name;
  return component_repository(instance->distribution.registry, catalog_component(image));
}

}  // namespace fluxop::distribution
