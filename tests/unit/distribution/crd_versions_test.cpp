#include "core/distribution/crd_versions.h"

#include <doctest/doctest.h>

#include "../memory_dir.h"

namespace fluxop::distribution {
namespace {

std::string crd(const std::string& versions) {
  std::string text =
      "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: widgets.example.com\n---\n"
      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
      "  name: widgets.example.com\nspec:\n  versions:\n";
  for (char name : versions) text += "    - name: v" + std::string(1, name) + "\n";
  return text;
}

TEST_CASE("crd versions: the newest earlier version serving every API version asked for") {
  testing::MemoryDir root;
  root.write("flux/v2.1.0/widget-controller.yaml", crd("1"));
  root.write("flux/v2.2.0/widget-controller.yaml", crd("12"));
  root.write("flux/v2.3.0/widget-controller.yaml", crd("12"));
  root.write("flux/v2.4.0/widget-controller.yaml", crd("23"));
  root.write("flux/v2.5.0/other.yaml", "kind: ConfigMap\n");
  Distribution distribution = directory_distribution(root.str(), root.files());
  Version target = *parse_version("v2.5.0");

  std::optional<Version> through =
      newest_serving(distribution, target, "widgets.example.com", {"v1", "v2"});
  REQUIRE(through);
  CHECK(to_string(*through) == "2.3.0");
  // Before the target only: v2.4.0 serves v2 and v3, but it is the target.
  CHECK_FALSE(
      newest_serving(distribution, *parse_version("v2.4.0"), "widgets.example.com", {"v2", "v3"}));
  CHECK_FALSE(newest_serving(distribution, target, "widgets.example.com", {"v1", "v3"}));
  CHECK_FALSE(newest_serving(distribution, target, "gadgets.example.com", {"v1"}));
}

}  // namespace
}  // namespace fluxop::distribution
