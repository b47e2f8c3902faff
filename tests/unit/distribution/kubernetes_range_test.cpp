#include "core/distribution/kubernetes_range.h"

#include <doctest/doctest.h>

#include <string>

#include "../memory_dir.h"
#include "core/error.h"

namespace fluxop::distribution {
namespace {

Version version(std::string_view text) { return *parse_version(text); }

// A distribution of one Flux version, with `ranges` as its
// kubernetes-versions.yaml unless empty.
Distribution distribution_with(std::string_view ranges) {
  testing::MemoryDir dir;
  dir.write("flux/v2.9.0/source-controller.yaml", "");
  if (!ranges.empty()) dir.write("kubernetes-versions.yaml", ranges);
  return directory_distribution(dir.str(), dir.files());
}

TEST_CASE("kubernetes range: fluxopctl's table has the minimum of each minor's flux check --pre") {
  Distribution plain = distribution_with("");
  for (const auto& row :
       {std::pair{"2.2.3", "1.26.0"}, std::pair{"2.4.0", "1.28.0"}, std::pair{"2.5.1", "1.30.0"},
        std::pair{"2.6.4", "1.31.0"}, std::pair{"2.7.5", "1.32.0"}, std::pair{"2.8.8", "1.33.0"},
        std::pair{"2.9.4", "1.33.0"}}) {
    // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    const char* flux = row.first;
    const char* minimum = row.second;
    CAPTURE(flux);
    std::optional<KubernetesRange> range = kubernetes_range(plain, version(flux));
    REQUIRE(range);
    CHECK(range->text == ">=" + std::string(minimum) + "-0");
    CHECK(range->source == "share/manifests/kubernetes-versions.yaml");
    Version at = version(minimum);
    CHECK(range->constraint.matches(at));
    at.patch = 0;
    --at.minor;
    CHECK_FALSE(range->constraint.matches(at));
  }
  // A provider's pre-release form of a supported version is supported.
  CHECK(kubernetes_range(plain, version("2.9.0"))->constraint.matches(version("v1.34.10-eks-1")));
  CHECK_FALSE(kubernetes_range(plain, version("2.99.0")));
}

TEST_CASE("kubernetes range: the distribution's file replaces an entry, minor by minor") {
  Distribution own = distribution_with("\"2.9\": \">=1.35.0-0\"\n\"2.10\": \">=1.34.0-0\"\n");
  std::optional<KubernetesRange> nine = kubernetes_range(own, version("2.9.0"));
  REQUIRE(nine);
  CHECK(nine->text == ">=1.35.0-0");
  CHECK(nine->source == "/mem/kubernetes-versions.yaml");
  CHECK_FALSE(nine->constraint.matches(version("v1.34.10")));
  CHECK(kubernetes_range(own, version("2.10.1"))->text == ">=1.34.0-0");
  CHECK(kubernetes_range(own, version("2.8.0"))->source ==
        "share/manifests/kubernetes-versions.yaml");
}

TEST_CASE("kubernetes range: a malformed file is refused naming the file and the entry") {
  CHECK_THROWS_WITH_AS(read_kubernetes_ranges("- 2.9\n", "k.yaml"),
                       "k.yaml: expected a map of Flux minors to version constraints", Error);
  CHECK_THROWS_WITH_AS(read_kubernetes_ranges("latest: '>=1.30'\n", "k.yaml"),
                       "k.yaml: \"latest\": not a Flux minor (MAJOR.MINOR, e.g. \"2.9\")", Error);
  CHECK_THROWS_WITH_AS(read_kubernetes_ranges("\"2.9\": newest\n", "k.yaml"),
                       "k.yaml: \"2.9\": not a version constraint (e.g. \">=1.33.0-0\")", Error);
  CHECK_THROWS_WITH_AS(read_kubernetes_ranges("\"2.9\": [1.33]\n", "k.yaml"),
                       "k.yaml: \"2.9\": not a version constraint (e.g. \">=1.33.0-0\")", Error);
  CHECK(read_kubernetes_ranges("", "k.yaml").empty());
}

}  // namespace
}  // namespace fluxop::distribution
