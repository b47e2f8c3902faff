#include "core/distribution/locate.h"

#include <doctest/doctest.h>

#include <string>

#include "core/error.h"
#include "core/file_system.h"

namespace fluxop::distribution {
namespace {

const std::string kFake = FLUXOPCTL_TEST_DATA "/distribution/fake";

instance::FluxInstance instance_with_artifact(std::string artifact) {
  instance::FluxInstance flux;
  flux.file = "instance.yaml";
  flux.distribution.artifact = std::move(artifact);
  return flux;
}

// A directory holding a distribution: a flux/ with a version is enough to open it.
void make_distribution(MemoryFileSystem& files, const std::string& dir) {
  files.add(dir + "/flux/v2.9.4/source-controller.yaml", "");
}

TEST_CASE("locate: the cache is distribution/ under fluxopctl's cache root") {
  CHECK(cache_dir({"/xdg/fluxopctl", ""}) == "/xdg/fluxopctl/distribution");
  CHECK(cache_dir({"", ""}).empty());
}

TEST_CASE("locate: artifacts are directories, file:// URLs, or oci:// URLs through a resolver") {
  CHECK(artifact_dir("/srv/dist", "flag") == "/srv/dist");
  CHECK(artifact_dir("dist", "flag") == "dist");
  CHECK(artifact_dir("file:///srv/dist", "flag") == "/srv/dist");
  CHECK(artifact_dir("file://dist", "flag") == "dist");
  CHECK_THROWS_WITH_AS(artifact_dir("oci://ghcr.io/x/manifests:latest", "flag"),
                       "flag: oci://ghcr.io/x/manifests:latest: oci:// artifacts cannot be read "
                       "here; give a local directory",
                       Error);
  OciResolver pulled = [](std::string_view url, std::string_view origin) {
    CHECK(url == "oci://ghcr.io/x/manifests:latest");
    CHECK(origin == "flag");
    return Distribution(kFake);
  };
  CHECK(open_artifact("oci://ghcr.io/x/manifests:latest", "flag", shared_disk(), pulled).root() ==
        kFake);
  CHECK(open_artifact(kFake, "flag", shared_disk(), pulled).root() == kFake);
  CHECK_THROWS_WITH_AS(artifact_dir("https://example.com/d.tgz", "flag"),
                       "flag: https://example.com/d.tgz: unsupported URL scheme (expected a "
                       "directory, file://DIR or oci://)",
                       Error);
}

TEST_CASE(
    "locate: flag, instance artifact, FLUXOPCTL_DISTRIBUTION, pulled default artifact, cache") {
  auto files = std::make_shared<MemoryFileSystem>();
  for (const char* dir : {"/flag", "/env", "/pulled", "/xdg/fluxopctl/distribution"})
    make_distribution(*files, dir);
  const std::string flag = "/flag";
  const std::string cache = "/xdg/fluxopctl/distribution";
  const Environment env{"/xdg/fluxopctl", "/env", files};
  const Environment no_env{"/xdg/fluxopctl", "", files};
  const instance::FluxInstance plain = instance_with_artifact("");
  PulledDefault pulled = [&] { return directory_distribution("/pulled", files); };
  PulledDefault never_pulled = [] { return std::optional<Distribution>(); };

  CHECK(locate(flag, plain, env, {}, pulled).root() == flag);
  CHECK(locate("file://" + flag, plain, env).root() == flag);
  CHECK(locate("", plain, env, {}, pulled).root() == "/env");
  CHECK(locate("", plain, no_env, {}, pulled).root() == "/pulled");
  CHECK(locate("", plain, no_env, {}, never_pulled).root() == cache);
  CHECK(locate("", plain, no_env).root() == cache);
  CHECK(locate("", plain, {"/no-cache/fluxopctl", "/env", files}).root() == "/env");
  // FLUXOPCTL_DISTRIBUTION takes what the flag takes: file:// and oci:// URLs.
  CHECK(locate("", plain, {"", "file://" + flag, files}).root() == flag);
  OciResolver env_to_flag = [&](std::string_view url, std::string_view origin) {
    CHECK(url == "oci://127.0.0.1:5000/flux:v1");
    CHECK(origin == "FLUXOPCTL_DISTRIBUTION");
    return directory_distribution(flag, files);
  };
  CHECK(locate("", plain, {"", "oci://127.0.0.1:5000/flux:v1", files}, env_to_flag).root() == flag);
  // The flag wins over an instance artifact that would fail.
  CHECK(locate(flag, instance_with_artifact("oci://ghcr.io/x"), env).root() == flag);
  // The instance artifact comes before the cache.
  OciResolver to_flag = [&](std::string_view, std::string_view origin) {
    CHECK(origin == "instance.yaml: .spec.distribution.artifact");
    return directory_distribution(flag, files);
  };
  CHECK(locate("", instance_with_artifact("oci://ghcr.io/x"), env, to_flag).root() == flag);
}

TEST_CASE("locate: the fake distribution opens with its versions") {
  Distribution fake = locate(kFake, instance_with_artifact(""), {});
  CHECK(fake.root() == kFake);
  CHECK(fake.versions().size() == 5);
}

TEST_CASE("locate: a source that is no distribution is named in the error") {
  auto files = std::make_shared<MemoryFileSystem>();
  const instance::FluxInstance plain = instance_with_artifact("");
  const std::string missing = "/missing";
  CHECK_THROWS_WITH_AS(locate(missing, plain, {"", "", files}),
                       ("--distribution-artifact: " + missing + "/flux: not a directory " +
                        "(expected a Flux distribution at " + missing + ")")
                           .c_str(),
                       Error);
  CHECK_THROWS_WITH_AS(locate("", plain, {"", missing, files}),
                       ("FLUXOPCTL_DISTRIBUTION: " + missing + "/flux: not a directory " +
                        "(expected a Flux distribution at " + missing + ")")
                           .c_str(),
                       Error);
  // An existing cache is used even when broken, rather than passed over silently.
  files->add("/xdg/fluxopctl/distribution/README", "");
  const std::string cache = "/xdg/fluxopctl/distribution";
  CHECK_THROWS_WITH_AS(
      locate("", plain, {"/xdg/fluxopctl", "", files}),
      (cache + "/flux: not a directory (expected a Flux distribution at " + cache + ")").c_str(),
      Error);
  // So is a broken FLUXOPCTL_DISTRIBUTION, before the cache.
  CHECK_THROWS_WITH_AS(locate("", plain, {"/xdg/fluxopctl", missing, files}),
                       ("FLUXOPCTL_DISTRIBUTION: " + missing + "/flux: not a directory " +
                        "(expected a Flux distribution at " + missing + ")")
                           .c_str(),
                       Error);
}

TEST_CASE("locate: without any source the error says to run fluxopctl pull") {
  PulledDefault never_pulled = [] { return std::optional<Distribution>(); };
  CHECK_THROWS_WITH_AS(
      locate("", instance_with_artifact(""),
             {"/nonexistent/fluxopctl", "", std::make_shared<MemoryFileSystem>()}, {},
             never_pulled),
      "no Flux distribution: run `fluxopctl pull` to fetch the default one "
      "(oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests:latest), or give one with "
      "--distribution-artifact or FLUXOPCTL_DISTRIBUTION (a directory or an oci:// URL)",
      Error);
}

}  // namespace
}  // namespace fluxop::distribution
