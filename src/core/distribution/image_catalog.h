// The image catalogs of a distribution (flux-images/<version>/<variant>.yaml):
// tag and digest of every Flux controller image of one build variant. The
// in-cluster operator pins images by these digests; `flux-operator build
// instance` does not read them (see manifest_images.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/distribution/component_image.h"
#include "core/distribution/distribution.h"

namespace fluxop::distribution {

// One entry of a catalog's `images` list.
struct CatalogImage {
  std::string name;     // "ghcr.io/fluxcd/source-controller"
  std::string new_tag;  // "v1.9.4"
  std::string digest;   // "sha256:..."
};

// The variants catalogs exist for.
inline constexpr std::string_view kUpstreamAlpine = "upstream-alpine";
inline constexpr std::string_view kEnterpriseAlpine = "enterprise-alpine";
inline constexpr std::string_view kEnterpriseDistroless = "enterprise-distroless";
inline constexpr std::string_view kEnterpriseDistrolessFips = "enterprise-distroless-fips";

// Reads a catalog file; errors name the file and the field.
std::vector<CatalogImage> read_image_catalog(std::string_view text, const std::string& path);

// The variant the operator assumes for a registry (one trailing '/' ignored)
// when .spec.distribution.variant is empty; throws for other registries.
std::string variant_for_registry(std::string_view registry);

// `variant` when given, else the registry's (variant_for_registry); throws
// when it is not a variant catalogs exist for.
// Errors name `field`.
std::string catalog_variant(std::string_view registry, std::string_view variant,
                            std::string_view field = ".spec.distribution.variant");

// The component an entry is the image of: the last element of its name.
std::string catalog_component(const CatalogImage& image);

// The entries of `components` (every entry when empty) in the catalog of
// `variant`, in catalog order, as published (their source for a mirror).
// Throws when the catalog is missing or lacks a component.
std::vector<CatalogImage> catalog_entries(const Distribution& distribution, const Version& version,
                                          std::string_view variant,
                                          const std::vector<std::string>& components);

// The images of `components` from the catalog of `variant` (empty: the
// registry's variant), in catalog order, each named <registry>/<component>
// with the catalog's tag and digest. Throws when the variant is unknown, the
// catalog is missing or lacks a component.
std::vector<ComponentImage> catalog_images(const Distribution& distribution, const Version& version,
                                           std::string_view registry, std::string_view variant,
                                           const std::vector<std::string>& components);

}  // namespace fluxop::distribution
