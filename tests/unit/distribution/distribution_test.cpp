#include "core/distribution/distribution.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../memory_dir.h"
#include "core/distribution/resolve.h"
#include "core/error.h"

namespace fluxop::distribution {
namespace {

const std::string kFake = FLUXOPCTL_TEST_DATA "/distribution/fake";

std::vector<std::string> names(const Distribution& distribution) {
  std::vector<std::string> out;
  for (const Version& version : distribution.versions()) out.push_back(version.original);
  return out;
}

TEST_CASE("distribution: versions are the version directories of flux/, ascending") {
  Distribution fake(kFake);
  // flux/latest is no version and flux/v9.9.9 is a file.
  CHECK(names(fake) ==
        std::vector<std::string>{"v2.6.0", "v2.7.0", "v2.7.1", "v2.8.0-rc.1", "v2.9.4"});
  const Version& rc = fake.versions()[3];
  CHECK(rc.major == 2);
  CHECK(rc.minor == 8);
  CHECK(rc.prerelease == "rc.1");
  CHECK(fake.manifests_dir(rc) == "flux/v2.8.0-rc.1");
  CHECK(fake.image_catalog_path(rc, "upstream-alpine") ==
        "flux-images/v2.8.0-rc.1/upstream-alpine.yaml");
  CHECK(fake.label(fake.manifests_dir(rc)) == kFake + "/flux/v2.8.0-rc.1");
  CHECK(fake.files("flux/v2.9.4") == std::vector<std::string>{"source-controller.yaml"});
}

TEST_CASE("distribution: a root without flux/ is refused") {
  testing::MemoryDir dir;
  dir.write("README", "");
  CHECK_THROWS_WITH_AS(directory_distribution(dir.str(), dir.files()),
                       "/mem/flux: not a directory (expected a Flux distribution at /mem)", Error);
  dir.write("flux", "a file");
  CHECK_THROWS_AS(directory_distribution(dir.str(), dir.files()), Error);
  // On disk: the fake distribution's flux/ has no flux/ of its own.
  CHECK_THROWS_WITH_AS(
      Distribution(kFake + "/flux"),
      (kFake + "/flux/flux: not a directory (expected a Flux distribution at " + kFake + "/flux)")
          .c_str(),
      Error);
}

TEST_CASE("resolve: the highest matching version, pre-releases only when asked for") {
  Distribution fake(kFake);
  auto resolve = [&](std::string_view constraint) {
    return resolve_version(fake, constraint).original;
  };
  CHECK(resolve("2.x") == "v2.9.4");
  CHECK(resolve("*") == "v2.9.4");
  CHECK(resolve("2.7.x") == "v2.7.1");
  CHECK(resolve("2.7.0") == "v2.7.0");
  CHECK(resolve("v2.7.0") == "v2.7.0");
  CHECK(resolve("~2.7.0") == "v2.7.1");
  CHECK(resolve("<2.8") == "v2.7.1");
  CHECK(resolve("2.6 - 2.8") == "v2.7.1");
  CHECK(resolve(">=2.8.0-0 <2.9.0") == "v2.8.0-rc.1");
  CHECK(resolve("2.8.0-rc.1") == "v2.8.0-rc.1");
  CHECK(resolve("2.6.x || 2.7.0") == "v2.7.0");
}

TEST_CASE("resolve: equal versions resolve to the first directory name") {
  testing::MemoryDir dir;
  for (const char* name : {"v2.7.1", "2.7.1+b", "2.7.1", "2.7.1+a", "v2.7.0"}) {
    dir.write(std::string("flux/") + name + "/rbac.yaml", "");
  }
  Distribution distribution = directory_distribution(dir.str(), dir.files());
  CHECK(resolve_version(distribution, "2.x").original == "2.7.1");
  CHECK(names(distribution) ==
        std::vector<std::string>{"v2.7.0", "2.7.1", "2.7.1+a", "2.7.1+b", "v2.7.1"});
}

TEST_CASE("resolve: errors name the field") {
  Distribution fake(kFake);
  CHECK_THROWS_WITH_AS(resolve_version(fake, "2.x.y"),
                       ".spec.distribution.version: invalid semver constraint \"2.x.y\"", Error);
  CHECK_THROWS_WITH_AS(resolve_version(fake, ""),
                       ".spec.distribution.version: invalid semver constraint \"\"", Error);
  CHECK_THROWS_WITH_AS(
      resolve_version(fake, ">= 2.6,, < 2.9", "flux.yaml: .spec.distribution.version"),
      "flux.yaml: .spec.distribution.version: invalid semver constraint \">= 2.6,, < 2.9\"", Error);
  CHECK_THROWS_WITH_AS(resolve_version(fake, "3.x"),
                       (".spec.distribution.version: no Flux version in " + kFake +
                        "/flux matches \"3.x\" (newest of each minor: v2.6.0, v2.7.1, "
                        "v2.8.0-rc.1, v2.9.4)")
                           .c_str(),
                       Error);
  testing::MemoryDir empty;
  empty.write("flux/latest/rbac.yaml", "");
  CHECK_THROWS_WITH_AS(resolve_version(directory_distribution(empty.str(), empty.files()), "2.x"),
                       (".spec.distribution.version: no Flux version in " + empty.str() +
                        "/flux matches \"2.x\" (it has no version directories)")
                           .c_str(),
                       Error);
}

}  // namespace
}  // namespace fluxop::distribution
