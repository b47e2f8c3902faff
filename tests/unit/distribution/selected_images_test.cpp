#include "core/distribution/selected_images.h"

#include <doctest/doctest.h>

#include <string>

#include "core/error.h"

namespace fluxop::distribution {
namespace {

const std::string kFake = FLUXOPCTL_TEST_DATA "/distribution/fake";

instance::FluxInstance mirrored_instance() {
  instance::FluxInstance flux;
  flux.distribution.version = "2.7.x";
  flux.distribution.registry = "registry.example.com/flux";
  flux.distribution.variant = "enterprise-alpine";
  flux.components = {"source-controller", "helm-controller"};
  return flux;
}

}  // namespace

TEST_CASE("selected images: a range selects every matching version, all its catalog") {
  Distribution fake(kFake);
  auto selected =
      selected_images(fake, {.instance = nullptr, .range = "2.6.0 || 2.7.1", .variant = ""});
  REQUIRE(selected.size() == 2);
  CHECK(selected[0].version.original == "v2.6.0");
  CHECK(selected[0].variant == "upstream-alpine");
  CHECK(selected[0].images.size() == 3);
  CHECK(selected[1].version.original == "v2.7.1");
  CHECK(selected[1].images.size() == 6);
  CHECK(installed_name(selected[1].images[0], nullptr) == "ghcr.io/fluxcd/source-controller");
}

TEST_CASE("selected images: an instance's version, components, registry and variant") {
  Distribution fake(kFake);
  instance::FluxInstance flux = mirrored_instance();
  auto selected = selected_images(fake, {.instance = &flux, .range = "", .variant = ""});
  REQUIRE(selected.size() == 1);
  CHECK(selected[0].version.original == "v2.7.1");
  CHECK(selected[0].variant == "enterprise-alpine");
  REQUIRE(selected[0].images.size() == 2);
  const CatalogImage& source = selected[0].images[0];
  CHECK(source.name == "ghcr.io/controlplaneio-fluxcd/alpine/source-controller");
  CHECK(installed_name(source, &flux) == "registry.example.com/flux/source-controller");
  CHECK(installed_name(selected[0].images[1], &flux) ==
        "registry.example.com/flux/helm-controller");
}

TEST_CASE("selected images: --variant replaces the instance's, a bad one named as the flag") {
  Distribution fake(kFake);
  instance::FluxInstance flux = mirrored_instance();
  auto selected =
      selected_images(fake, {.instance = &flux, .range = "", .variant = "enterprise-distroless"});
  REQUIRE(selected.size() == 1);
  CHECK(selected[0].images[0].name == "ghcr.io/controlplaneio-fluxcd/distroless/source-controller");
  CHECK_THROWS_WITH_AS(selected_images(fake, {.instance = &flux, .range = "", .variant = "debian"}),
                       "--variant: unsupported variant \"debian\"; one of upstream-alpine, "
                       "enterprise-alpine, enterprise-distroless, enterprise-distroless-fips",
                       Error);
  CHECK_THROWS_WITH_AS(selected_images(fake, {.instance = nullptr, .range = "3.x", .variant = ""}),
                       doctest::Contains("--version: no Flux version"), Error);
}

TEST_CASE("selected images: without an instance or a range, the newest version") {
  Distribution fake(kFake);
  // The newest version "*" matches, as the operator's default resolves it,
  // is v2.9.4 (flux/v9.9.9 is a file, no version), which has no catalog.
  CHECK_THROWS_WITH_AS(selected_images(fake, {}), doctest::Contains("flux-images/v2.9.4"), Error);
}

}  // namespace fluxop::distribution
