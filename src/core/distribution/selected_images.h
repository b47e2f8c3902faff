// The images a FluxInstance, or a version range and variant, installs, per
// Flux version: what `fluxopctl images` lists and `fluxopctl mirror` copies,
// from the image catalogs `apply` pins images with.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/distribution/distribution.h"
#include "core/distribution/image_catalog.h"
#include "core/instance/instance.h"

namespace fluxop::distribution {

struct VersionImages {
  Version version;
  std::string variant;
  // The catalog's entries, named where they are published (the source of a
  // mirror), in catalog order.
  std::vector<CatalogImage> images;
};

struct ImageSelection {
  // The instance's components, version, registry and variant; none: every
  // image of the catalog, of the newest version, of the upstream variant.
  const instance::FluxInstance* instance = nullptr;
  std::string range;    // --version: every matching version instead
  std::string variant;  // --variant: replaces the instance's or the registry's
};

// Throws fluxop::Error naming the flag or field that selects nothing.
std::vector<VersionImages> selected_images(const Distribution& distribution,
                                           const ImageSelection& selection);

// The name an image is installed under: the instance's registry and the
// component (as the render names it), else where it is published.
std::string installed_name(const CatalogImage& image, const instance::FluxInstance* instance);

}  // namespace fluxop::distribution
