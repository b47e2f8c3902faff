// The decoder of what a registry sends as a manifest or an index: bounded in
// size, nesting, layers and an index's manifests before anything is followed.
#include <doctest/doctest.h>
#include <string>

#include "core/error.h"
#include "core/oci/registry.h"

namespace fluxop::oci {
namespace {

const std::string kDigest = "sha256:" + std::string(64, 'a');

std::string descriptor() {
  return R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" + kDigest +
         R"(","size":10})";
}

std::string repeated(const std::string& item, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += (i ? "," : "") + item;
  return out;
}

std::string index_of(std::size_t manifests) {
  return R"({"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[)" +
         repeated(descriptor(), manifests) + "]}";
}

std::string manifest_of(std::size_t layers) {
  return R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","config":)" + descriptor() +
         R"(,"layers":[)" + repeated(descriptor(), layers) + "]}";
}

}  // namespace

TEST_CASE("manifest: an index gives its manifests, up to 1000") {
  Manifest index = parse_manifest(index_of(kMaxIndexManifests), "", "m");
  REQUIRE(index.manifests.size() == kMaxIndexManifests);
  CHECK(index.manifests[0].digest == kDigest);
  CHECK_THROWS_WITH_AS(parse_manifest(index_of(kMaxIndexManifests + 1), "", "m"),
                       "m: an index of more than 1000 manifests", Error);
}

TEST_CASE("manifest: up to 128 layers") {
  CHECK(parse_manifest(manifest_of(kMaxManifestLayers), "", "m").layers.size() ==
        kMaxManifestLayers);
  CHECK_THROWS_WITH_AS(parse_manifest(manifest_of(kMaxManifestLayers + 1), "", "m"),
                       "m: more than 128 layers", Error);
}

TEST_CASE("manifest: deep nesting and an oversized document are refused, not followed") {
  std::string deep = R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","x":)" +
                     std::string(30'000, '[') + std::string(30'000, ']') + "}";
  CHECK_THROWS_WITH_AS(parse_manifest(deep, "", "m"), doctest::Contains("m: not JSON: nesting"),
                       Error);
  std::string big = manifest_of(1);
  big.insert(big.size() - 1, R"(,"pad":")" + std::string(kMaxManifestBytes, ' ') + "\"");
  CHECK_THROWS_WITH_AS(parse_manifest(big, "", "m"), "m: larger than 4194304 bytes", Error);
}

}  // namespace fluxop::oci
