#include "core/distribution/image_catalog.h"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/distribution/resolve.h"
#include "core/error.h"
#include "core/yaml/parse.h"

namespace fluxop::distribution {
namespace {

const std::string kFake = FLUXOPCTL_TEST_DATA "/distribution/fake";

std::vector<CatalogImage> catalog_at(const std::string& path) {
  return read_image_catalog(yaml::read_file(path), path);
}
const std::vector<std::string> kFour{"source-controller", "kustomize-controller", "helm-controller",
                                     "notification-controller"};

// The digest the fake catalogs give a component: sha256 of "version/variant/component".
const char* kEnterpriseSource =
    "sha256:e551f70e5ebb355d36414b12a6340bf49ee9dcabe7052c227e0b3f065f2ddf0b";

TEST_CASE("image catalog: entries in file order") {
  auto catalog = catalog_at(kFake + "/flux-images/v2.7.1/enterprise-alpine.yaml");
  REQUIRE(catalog.size() == 6);
  CHECK(catalog[0].name == "ghcr.io/controlplaneio-fluxcd/alpine/source-controller");
  CHECK(catalog[0].new_tag == "v1.7.1");
  CHECK(catalog[0].digest == kEnterpriseSource);
  CHECK(catalog[5].name == "ghcr.io/controlplaneio-fluxcd/alpine/image-automation-controller");
}

TEST_CASE("image catalog: the registry's variant") {
  CHECK(variant_for_registry("ghcr.io/fluxcd") == "upstream-alpine");
  CHECK(variant_for_registry("fluxcd/") == "upstream-alpine");
  CHECK(variant_for_registry("ghcr.io/controlplaneio-fluxcd/alpine") == "enterprise-alpine");
  CHECK(variant_for_registry("ghcr.io/controlplaneio-fluxcd/distroless") ==
        "enterprise-distroless");
  CHECK(variant_for_registry("709825985650.dkr.ecr.us-east-1.amazonaws.com/controlplane/fluxcd") ==
        "enterprise-distroless");
  CHECK(variant_for_registry("ghcr.io/controlplaneio-fluxcd/distroless-fips") ==
        "enterprise-distroless-fips");
  CHECK_THROWS_WITH_AS(variant_for_registry("registry.example.com/flux"),
                       ".spec.distribution.registry: no image catalog variant is known for "
                       "\"registry.example.com/flux\"; set .spec.distribution.variant",
                       Error);
}

TEST_CASE("image catalog: component images pinned by digest, named after the registry") {
  Distribution fake(kFake);
  Version v271 = resolve_version(fake, "2.7.1");
  auto images = catalog_images(fake, v271, "ghcr.io/controlplaneio-fluxcd/alpine/", "",
                               {"helm-controller", "source-controller"});
  // Catalog order, not the order asked for.
  REQUIRE(images.size() == 2);
  CHECK(images[0] == ComponentImage{"source-controller",
                                    "ghcr.io/controlplaneio-fluxcd/alpine/source-controller",
                                    "v1.7.1", kEnterpriseSource});
  CHECK(images[1].component == "helm-controller");
  CHECK(images[1].tag == "v1.4.1");

  // An explicit variant wins over the registry's; the repository stays the registry's.
  auto mirrored = catalog_images(fake, v271, "registry.example.com/flux", "enterprise-alpine",
                                 {"source-controller"});
  REQUIRE(mirrored.size() == 1);
  CHECK(mirrored[0].repository == "registry.example.com/flux/source-controller");
  CHECK(mirrored[0].digest == kEnterpriseSource);

  auto upstream = catalog_images(fake, v271, "ghcr.io/fluxcd", "", {"source-controller"});
  REQUIRE(upstream.size() == 1);
  CHECK(upstream[0].digest != kEnterpriseSource);
  CHECK(upstream[0].digest.starts_with("sha256:"));
}

TEST_CASE("image catalog: errors") {
  Distribution fake(kFake);
  Version v271 = resolve_version(fake, "2.7.1");
  Version v260 = resolve_version(fake, "2.6.0");
  CHECK_THROWS_WITH_AS(
      catalog_images(fake, v271, "ghcr.io/fluxcd", "debian", kFour),
      ".spec.distribution.variant: unsupported variant \"debian\"; one of upstream-alpine, "
      "enterprise-alpine, enterprise-distroless, enterprise-distroless-fips",
      Error);
  CHECK_THROWS_WITH_AS(
      catalog_images(fake, v271, "ghcr.io/controlplaneio-fluxcd/distroless-fips", "", kFour),
      doctest::Contains("flux-images/v2.7.1/enterprise-distroless-fips.yaml"), Error);
  CHECK_THROWS_WITH_AS(catalog_images(fake, v260, "ghcr.io/fluxcd", "", kFour),
                       (kFake + "/flux-images/v2.6.0/upstream-alpine.yaml: no image for "
                                "helm-controller")
                           .c_str(),
                       Error);

  // Catalogs that are not one, each named in its error.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"images: {}\n", "catalog.yaml: images: expected a list"},
      {"- name: a\n", "catalog.yaml: expected a map with an images list"},
      {"images:\n- name: fluxcd/source-controller\n  newTag: 1.5\n",
       "catalog.yaml: images[0].newTag: expected a string, found scalar"},
      {"images:\n- fluxcd/source-controller\n", "catalog.yaml: images[0]: expected a map"},
  };
  // Not a structured binding: clang 14 cannot capture one in the check's lambda.
  for (const auto& entry : bad) {
    const std::string& text = entry.first;
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(read_image_catalog(text, "catalog.yaml"), entry.second.c_str(), Error);
  }
  CHECK_THROWS_WITH_AS(read_image_catalog("images: [\n", "catalog.yaml"),
                       doctest::Contains("catalog.yaml:"), Error);

  // Without a digest an entry still names a tag (a null reads as empty).
  auto catalog = read_image_catalog(
      "images:\n- name: a/source-controller\n  newTag: v1\n  digest:\n", "catalog.yaml");
  REQUIRE(catalog.size() == 1);
  CHECK(catalog[0].new_tag == "v1");
  CHECK(catalog[0].digest.empty());
}

}  // namespace
}  // namespace fluxop::distribution
