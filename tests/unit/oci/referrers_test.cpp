// The referrers tag schema's decisions, without a registry: which answers of
// the referrers API mean "not served", the descriptor a referrer is listed
// by, and the index a pushed referrer is added to. The requests, against a
// registry with and one without the API, are tests/signatures/cosign_test.sh's.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "core/oci/referrers.h"

namespace fluxop::oci {
namespace {

const std::string kBundleType = "application/vnd.dev.sigstore.bundle.v0.3+json";

std::string digest_of(char c) { return "sha256:" + std::string(64, c); }

// A cosign bundle referrer: an empty config, its artifactType in the manifest.
std::string referrer_manifest(bool with_artifact_type) {
  nlohmann::json manifest = {
      {"schemaVersion", 2},
      {"mediaType", kOciManifest},
      {"config",
       {{"mediaType", "application/vnd.oci.empty.v1+json"},
        {"digest", digest_of('e')},
        {"size", 2}}},
      {"layers", {{{"mediaType", kBundleType}, {"digest", digest_of('b')}, {"size", 100}}}},
      {"subject", {{"mediaType", kOciManifest}, {"digest", digest_of('c')}, {"size", 500}}},
      {"annotations",
       {{"dev.sigstore.bundle.predicateType", "https://sigstore.dev/cosign/sign/v1"},
        {"org.opencontainers.image.created", "2026-11-27T22:00:00Z"}}}};
  if (with_artifact_type) manifest["artifactType"] = kBundleType;
  return manifest.dump();
}

Manifest index_listing(const std::vector<std::string>& digests) {
  nlohmann::json index = {{"schemaVersion", 2},
                          {"mediaType", kOciIndex},
                          {"manifests", nlohmann::json::array()},
                          {"annotations", {{"kept", "yes"}}}};
  for (const std::string& digest : digests)
    index["manifests"].push_back({{"mediaType", kOciManifest},
                                  {"digest", digest},
                                  {"size", 7},
                                  {"artifactType", "application/spdx+json"},
                                  {"annotations", {{"owner", "someone else"}}}});
  return parse_manifest(index.dump(), "", "tag");
}

}  // namespace

TEST_CASE("referrers: the answers that say a registry does not serve the API") {
  for (long status : {400L, 404L, 405L, 501L}) {
    CAPTURE(status);
    CHECK(referrers_api_not_served(status));
  }
  // Served (it lists), or a real failure the mirror must report.
  for (long status : {200L, 401L, 403L, 406L, 429L, 500L, 502L, 503L}) {
    CAPTURE(status);
    CHECK_FALSE(referrers_api_not_served(status));
  }
}

TEST_CASE("referrers: the tag of a digest") {
  CHECK(referrers_tag(digest_of('a')) == "sha256-" + std::string(64, 'a'));
}

TEST_CASE("referrers: a referrer's descriptor has what the spec asks of the tag's entries") {
  Manifest manifest = parse_manifest(referrer_manifest(true), "", "m");
  REQUIRE(manifest.subject);
  CHECK(manifest.subject->digest == digest_of('c'));
  Descriptor descriptor = referrer_descriptor(manifest);
  CHECK(descriptor.media_type == kOciManifest);
  CHECK(descriptor.digest == manifest.digest);
  CHECK(descriptor.size == manifest.bytes.size());
  CHECK(descriptor.artifact_type == kBundleType);
  CHECK(descriptor.annotations == manifest.annotations);
  CHECK(descriptor.annotations.size() == 2);
  // Without an artifactType: the config's media type.
  Manifest untyped = parse_manifest(referrer_manifest(false), "", "m");
  CHECK(referrer_descriptor(untyped).artifact_type == "application/vnd.oci.empty.v1+json");
}

TEST_CASE("referrers: a referrer added to the tag's index") {
  Descriptor referrer = referrer_descriptor(parse_manifest(referrer_manifest(true), "", "m"));

  SUBCASE("no tag yet: an index of the referrer alone") {
    std::optional<std::string> bytes = referrers_index_adding(std::nullopt, referrer, "tag");
    REQUIRE(bytes);
    Manifest index = parse_manifest(*bytes, "", "index");
    CHECK(index.media_type == kOciIndex);
    CHECK(nlohmann::json::parse(*bytes)["schemaVersion"] == 2);
    REQUIRE(index.manifests.size() == 1);
    const Descriptor& listed = index.manifests[0];
    CHECK(listed.media_type == referrer.media_type);
    CHECK(listed.digest == referrer.digest);
    CHECK(listed.size == referrer.size);
    CHECK(listed.artifact_type == kBundleType);
    CHECK(listed.annotations == referrer.annotations);
  }

  SUBCASE("a tag of other referrers: theirs kept, in their order, the referrer last") {
    Manifest existing = index_listing({digest_of('1'), digest_of('2')});
    std::optional<std::string> bytes = referrers_index_adding(existing, referrer, "tag");
    REQUIRE(bytes);
    nlohmann::json index = nlohmann::json::parse(*bytes);
    REQUIRE(index["manifests"].size() == 3);
    nlohmann::json before = nlohmann::json::parse(existing.bytes);
    CHECK(index["manifests"][0] == before["manifests"][0]);
    CHECK(index["manifests"][1] == before["manifests"][1]);
    CHECK(index["manifests"][2]["digest"] == referrer.digest);
    CHECK(index["annotations"] == before["annotations"]);
  }

  SUBCASE("a tag that lists it already: nothing to push, no duplicate") {
    Manifest existing = index_listing({digest_of('1'), referrer.digest});
    CHECK_FALSE(referrers_index_adding(existing, referrer, "tag"));
  }

  SUBCASE("a tag that holds no OCI index is not overwritten") {
    Manifest image = parse_manifest(referrer_manifest(true), "", "m");
    CHECK_THROWS_WITH_AS(referrers_index_adding(image, referrer, "r:sha256-x: referrers tag"),
                         doctest::Contains("r:sha256-x: referrers tag: holds a"), Error);
  }
}

}  // namespace fluxop::oci
