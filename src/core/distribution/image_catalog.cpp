#include "core/distribution/image_catalog.h"

#include <algorithm>
#include <array>

#include "core/error.h"
#include "core/yaml/parse.h"

namespace fluxop::distribution {
namespace {

// What the operator maps a registry to when no variant is given.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kRegistryVariants{{
    {"fluxcd", kUpstreamAlpine},
    {"ghcr.io/fluxcd", kUpstreamAlpine},
    {"ghcr.io/controlplaneio-fluxcd/alpine", kEnterpriseAlpine},
    {"ghcr.io/controlplaneio-fluxcd/distroless", kEnterpriseDistroless},
    {"709825985650.dkr.ecr.us-east-1.amazonaws.com/controlplane/fluxcd", kEnterpriseDistroless},
    {"ghcr.io/controlplaneio-fluxcd/distroless-fips", kEnterpriseDistrolessFips},
}};

// A missing or null field reads as "", as Go's decoder leaves a string field.
std::string string_field(const yaml::Node& entry, std::string_view key, const std::string& where) {
  const yaml::Node* value = entry.get(key);
  if (!value || value->is_null()) return "";
  if (!value->is_string()) {
    throw Error(where + "." + std::string(key) + ": expected a string, found " +
                std::string(yaml::kind_name(*value)));
  }
  return value->text();
}

bool is_known_variant(std::string_view variant) {
  return variant == kUpstreamAlpine || variant == kEnterpriseAlpine ||
         variant == kEnterpriseDistroless || variant == kEnterpriseDistrolessFips;
}

std::string_view last_path_element(std::string_view name) {
  std::size_t slash = name.rfind('/');
  return slash == std::string_view::npos ? name : name.substr(slash + 1);
}

}  // namespace

std::vector<CatalogImage> read_image_catalog(std::string_view text, const std::string& path) {
  yaml::Node doc = yaml::parse_document(text, path);
  if (!doc.is_map()) throw Error(path + ": expected a map with an images list");
  const yaml::Node* images = doc.get("images");
  if (!images || !images->is_sequence()) throw Error(path + ": images: expected a list");
  std::vector<CatalogImage> catalog;
  for (std::size_t i = 0; i < images->items().size(); ++i) {
    const yaml::Node& entry = images->items()[i];
    std::string where = path + ": images[" + std::to_string(i) + "]";
    if (!entry.is_map()) throw Error(where + ": expected a map");
    catalog.push_back({string_field(entry, "name", where), string_field(entry, "newTag", where),
                       string_field(entry, "digest", where)});
  }
  return catalog;
}

std::string variant_for_registry(std::string_view registry) {
  std::string_view trimmed =
      registry.ends_with('/') ? registry.substr(0, registry.size() - 1) : registry;
  for (const auto& [known, variant] : kRegistryVariants) {
    if (known == trimmed) return std::string(variant);
  }
  throw Error(".spec.distribution.registry: no image catalog variant is known for \"" +
              std::string(trimmed) + "\"; set .spec.distribution.variant");
}

std::string catalog_variant(std::string_view registry, std::string_view variant,
                            std::string_view field) {
  std::string chosen = variant.empty() ? variant_for_registry(registry) : std::string(variant);
  if (!is_known_variant(chosen))
    throw Error(std::string(field) + ": unsupported variant \"" + chosen + "\"; one of " +
                std::string(kUpstreamAlpine) + ", " + std::string(kEnterpriseAlpine) + ", " +
                std::string(kEnterpriseDistroless) + ", " + std::string(kEnterpriseDistrolessFips));
  return chosen;
}

std::string catalog_component(const CatalogImage& image) {
  return std::string(last_path_element(image.name));
}

std::vector<CatalogImage> catalog_entries(const Distribution& distribution, const Version& version,
                                          std::string_view variant,
                                          const std::vector<std::string>& components) {
  std::string file = distribution.image_catalog_path(version, variant);
  std::string path = distribution.label(file);
  std::vector<CatalogImage> entries = read_image_catalog(distribution.read(file), path);
  if (components.empty()) return entries;
  std::vector<CatalogImage> selected;
  for (CatalogImage& entry : entries) {
    std::string component = catalog_component(entry);
    if (std::find(components.begin(), components.end(), component) != components.end())
      selected.push_back(std::move(entry));
  }
  // Counted as the operator counts them, so a duplicate entry can stand in
  // for a missing one there and here alike.
  if (selected.size() == components.size()) return selected;
  std::string missing;
  for (const std::string& component : components) {
    auto named = [&](const CatalogImage& image) { return catalog_component(image) == component; };
    if (std::none_of(selected.begin(), selected.end(), named)) missing += " " + component;
  }
  throw Error(path + ": " +
              (missing.empty() ? std::string("lists a component image more than once")
                               : "no image for" + missing));
}

std::vector<ComponentImage> catalog_images(const Distribution& distribution, const Version& version,
                                           std::string_view registry, std::string_view variant,
                                           const std::vector<std::string>& components) {
  std::vector<ComponentImage> images;
  for (CatalogImage& entry :
       catalog_entries(distribution, version, catalog_variant(registry, variant), components)) {
    std::string component = catalog_component(entry);
    images.push_back({component, component_repository(registry, component),
                      std::move(entry.new_tag), std::move(entry.digest)});
  }
  return images;
}

}  // namespace fluxop::distribution
