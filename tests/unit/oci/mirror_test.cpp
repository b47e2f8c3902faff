// What a mirror copies of a multi-platform image.
#include "core/oci/mirror.h"

#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>

#include "../loopback_listener.h"
#include "../temp_dir.h"
#include "core/error.h"

namespace fluxop::oci {
namespace {

std::string child(char fill, const std::string& platform) {
  return R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:)" +
         std::string(64, fill) + R"(","size":10)" + platform + "}";
}

Manifest three_platforms() {
  return parse_manifest(
      R"({"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[)" +
          child('a', R"(,"platform":{"os":"linux","architecture":"amd64"})") + "," +
          child('b', R"(,"platform":{"os":"linux","architecture":"arm64",)"
                     R"("variant":"v8"})") +
          "," + child('c', R"(,"platform":{"os":"unknown","architecture":"unknown"})") + "," +
          child('d', "") + "]}",
      "", "index");
}

}  // namespace

TEST_CASE("mirror: an index's platforms are read from its children") {
  Manifest index = three_platforms();
  REQUIRE(index.manifests.size() == 4);
  CHECK(index.manifests[0].platform == "linux/amd64");
  CHECK(index.manifests[1].platform == "linux/arm64/v8");
  CHECK(index.manifests[2].platform == "unknown/unknown");
  CHECK(index.manifests[3].platform.empty());
}

TEST_CASE("mirror: every child without --platform, the named ones with it") {
  Manifest index = three_platforms();
  CHECK(mirrored_children(index, {}, "i").size() == 4);
  auto arm = mirrored_children(index, {"linux/arm64"}, "i");
  REQUIRE(arm.size() == 1);
  CHECK(arm[0].digest == "sha256:" + std::string(64, 'b'));
  auto both = mirrored_children(index, {"linux/amd64", "linux/arm64/v8"}, "i");
  CHECK(both.size() == 2);
  // "linux/arm" is not a prefix of a platform's elements.
  CHECK_THROWS_WITH_AS(mirrored_children(index, {"linux/arm"}, "i"),
                       "i: no manifest for the platforms asked (--platform); the index has "
                       "linux/amd64, linux/arm64/v8, unknown/unknown",
                       Error);
}

// A mirror whose destination never answers, stopped as a signal stops it:
// its requests end at once, and its scratch directory goes with it.
TEST_CASE("mirror: cancelled, it ends its requests and removes its scratch directory") {
  testing::TempDir tmp;
  const char* saved = getenv("TMPDIR");
  std::string restore = saved ? saved : "";
  setenv("TMPDIR", tmp.str().c_str(), 1);
  int port = 0;
  int listener = testing::listen_on_loopback(port);  // accepts, never answers
  std::string registry = "127.0.0.1:" + std::to_string(port);
  MirrorCopy copy{Reference::parse("oci://" + registry + "/src/a@sha256:" + std::string(64, 'a')),
                  Reference::parse("oci://" + registry + "/dst/a:v1")};
  MirrorOptions options;
  auto started = std::chrono::steady_clock::now();
  std::atomic<bool> scratch_seen{false};
  options.registry.cancelled = [&] {
    if (!std::filesystem::is_empty(tmp.path())) scratch_seen = true;
    return std::chrono::steady_clock::now() - started > std::chrono::milliseconds(300);
  };
  CHECK_THROWS_WITH_AS(mirror({copy}, options), doctest::Contains("cancelled"), Error);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
  CHECK(scratch_seen);
  CHECK(std::filesystem::is_empty(tmp.path()));
  close(listener);
  if (saved)
    setenv("TMPDIR", restore.c_str(), 1);
  else
    unsetenv("TMPDIR");
}

}  // namespace fluxop::oci
