// The referrers tag schema's decisions, without a registry: which answers of
// the referrers API mean "not served", and the tag. The requests, against a
// registry with and one without the API, are tests/signatures/cosign_test.sh's.
#include <doctest/doctest.h>
#include <string>

#include "core/oci/referrers.h"

namespace fluxop::oci {
namespace {

std::string digest_of(char c) { return "sha256:" + std::string(64, c); }

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

}  // namespace fluxop::oci
