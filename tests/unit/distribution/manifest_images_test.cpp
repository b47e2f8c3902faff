#include "core/distribution/manifest_images.h"
#include "manifest_images.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../memory_dir.h"
#include "core/distribution/resolve.h"
#include "core/error.h"

namespace fluxop::distribution {
namespace {

const std::string kFake = FLUXOPCTL_TEST_DATA "/distribution/fake";

TEST_CASE("manifest images: the Deployment's tag under the instance's registry") {
  Distribution fake(kFake);
  Version v271 = resolve_version(fake, "2.7.x");
  auto images = images_from_manifests(fake, v271, "registry.example.com/flux/",
                                      {"kustomize-controller", "source-controller"});
  CHECK(
      images ==
      std::vector<ComponentImage>{
          {"kustomize-controller", "registry.example.com/flux/kustomize-controller", "v1.7.0", ""},
          {"source-controller", "registry.example.com/flux/source-controller", "v1.7.1", ""},
      });
}

TEST_CASE("manifest images: image tags as go-containerregistry reads them") {
  CHECK(image_tag("fluxcd/source-controller:v1.7.1") == "v1.7.1");
  CHECK(image_tag("fluxcd/source-controller") == "latest");
  CHECK(image_tag("localhost:5000/fluxcd/source-controller") == "latest");
  CHECK(image_tag("localhost:5000/fluxcd/source-controller:v1_2.3-x") == "v1_2.3-x");
  CHECK_FALSE(image_tag("fluxcd/source-controller:"));
  CHECK_FALSE(image_tag("fluxcd/source-controller:v1+x"));
  CHECK_FALSE(image_tag("fluxcd/source-controller:" + std::string(129, 'a')));
  CHECK(image_tag("fluxcd/source-controller:" + std::string(128, 'a')) == std::string(128, 'a'));
}

TEST_CASE("manifest images: errors name the file") {
  Distribution fake(kFake);
  Version v260 = resolve_version(fake, "2.6.0");
  CHECK_THROWS_WITH_AS(
      images_from_manifests(fake, v260, "ghcr.io/fluxcd", {"image-reflector-controller"}),
      doctest::Contains("flux/v2.6.0/image-reflector-controller.yaml"), Error);

  testing::MemoryDir dir;
  dir.write("flux/v2.7.0/rbac.yaml", "kind: ClusterRole\n");
  dir.write("flux/v2.7.0/source-controller.yaml",
            "kind: Deployment\nmetadata:\n  name: source-controller\nspec: {}\n");
  dir.write(
      "flux/v2.7.0/helm-controller.yaml",
      "kind: Deployment\nmetadata:\n  name: helm-controller\nspec:\n  template:\n    spec:\n"
      "      containers:\n      - name: manager\n        image: fluxcd/helm-controller:v1 x\n");
  Distribution distribution = directory_distribution(dir.str(), dir.files());
  Version v270 = resolve_version(distribution, "2.7.0");
  std::string flux = dir.str() + "/flux/v2.7.0/";
  CHECK_THROWS_WITH_AS(images_from_manifests(distribution, v270, "ghcr.io/fluxcd", {"rbac"}),
                       (flux + "rbac.yaml: no Deployment with a container").c_str(), Error);
  CHECK_THROWS_WITH_AS(
      images_from_manifests(distribution, v270, "ghcr.io/fluxcd", {"source-controller"}),
      (flux + "source-controller.yaml: Deployment source-controller: "
              "spec.template.spec.containers: expected a list")
          .c_str(),
      Error);
  CHECK_THROWS_WITH_AS(
      images_from_manifests(distribution, v270, "ghcr.io/fluxcd", {"helm-controller"}),
      (flux + "helm-controller.yaml: image \"fluxcd/helm-controller:v1 x\": invalid tag").c_str(),
      Error);
}

}  // namespace
}  // namespace fluxop::distribution
