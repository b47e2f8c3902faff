#include "core/oci/reference.h"

#include <doctest/doctest.h>

#include "core/distribution/locate.h"
#include "core/error.h"

namespace fluxop::oci {
namespace {

const std::string kDigest = "sha256:" + std::string(64, 'a');

TEST_CASE("reference: registry, repository, tag and digest") {
  Reference ref = Reference::parse(distribution::kDefaultArtifact);
  CHECK(ref.registry == "ghcr.io");
  CHECK(ref.repository == "controlplaneio-fluxcd/flux-operator-manifests");
  CHECK(ref.tag == "latest");
  CHECK(ref.digest.empty());
  CHECK(ref.str() == distribution::kDefaultArtifact);

  ref = Reference::parse("oci://127.0.0.1:5000/flux/manifests");
  CHECK(ref.registry == "127.0.0.1:5000");
  CHECK(ref.tag == "latest");  // no tag: latest, as the upstream CLI assumes

  ref = Reference::parse("oci://[::1]:5000/a/b/c:v1.2.3@" + kDigest);
  CHECK(ref.registry == "[::1]:5000");
  CHECK(ref.repository == "a/b/c");
  CHECK(ref.tag == "v1.2.3");
  CHECK(ref.digest == kDigest);
  CHECK(ref.identifier() == kDigest);
  CHECK(ref.pinned(kDigest) == "oci://[::1]:5000/a/b/c@" + kDigest);

  ref = Reference::parse("oci://registry.example.com/a__b/c.d-e@" + kDigest);
  CHECK(ref.tag.empty());
  CHECK(ref.identifier() == kDigest);
  CHECK(ref.str() == "oci://registry.example.com/a__b/c.d-e@" + kDigest);
}

TEST_CASE("reference: malformed URLs are named with what is wrong") {
  CHECK_THROWS_WITH_AS(Reference::parse("ghcr.io/a/b"), "ghcr.io/a/b: not an oci:// URL", Error);
  CHECK_THROWS_WITH_AS(Reference::parse("oci://ghcr.io"),
                       "oci://ghcr.io: no repository after the registry", Error);
  CHECK_THROWS_WITH_AS(Reference::parse("oci://ghcr.io/A/b"),
                       "oci://ghcr.io/A/b: invalid repository 'A/b' (lowercase letters, digits "
                       "and . _ - separators, '/' between components)",
                       Error);
  CHECK_THROWS_WITH_AS(Reference::parse("oci://ghcr.io/a:x!"),
                       "oci://ghcr.io/a:x!: invalid tag 'x!'", Error);
  CHECK_THROWS_WITH_AS(Reference::parse("oci://ghcr.io/a@sha256:abc"),
                       "oci://ghcr.io/a@sha256:abc: invalid digest 'sha256:abc' (expected "
                       "sha256: and 64 hex digits)",
                       Error);
  CHECK_THROWS_AS(Reference::parse("oci://host:port/a"), Error);
  CHECK_THROWS_AS(Reference::parse("oci://ho st/a"), Error);
  CHECK_THROWS_AS(Reference::parse("oci://ghcr.io/a//b"), Error);
  CHECK_THROWS_AS(Reference::parse("oci://ghcr.io/a/"), Error);
  CHECK_THROWS_AS(Reference::parse("oci://ghcr.io/a.-b"), Error);
  CHECK_THROWS_AS(Reference::parse("oci://ghcr.io/a___b"), Error);
  CHECK_THROWS_AS(Reference::parse("oci://[zz]/a"), Error);
}

TEST_CASE("reference: plain HTTP only for loopback and insecure registries") {
  CHECK(plain_http_allowed("localhost:5000", {}));
  CHECK(plain_http_allowed("127.0.0.1:5000", {}));
  CHECK(plain_http_allowed("127.1.2.3", {}));
  CHECK(plain_http_allowed("[::1]:5000", {}));
  CHECK_FALSE(plain_http_allowed("ghcr.io", {}));
  CHECK_FALSE(plain_http_allowed("127.example.com", {}));  // a name, not an address
  CHECK_FALSE(plain_http_allowed("127.0.0", {}));
  CHECK_FALSE(plain_http_allowed("10.0.0.1:5000", {}));
  CHECK(plain_http_allowed("mirror.internal:5000", {"mirror.internal:5000"}));
  CHECK(plain_http_allowed("mirror.internal:5000", {"mirror.internal"}));
  CHECK_FALSE(plain_http_allowed("mirror.internal:5000", {"mirror.internal:6000"}));
  CHECK(registry_host("[::1]:5000") == "::1");
  CHECK(registry_host("ghcr.io:443") == "ghcr.io");
}

}  // namespace
}  // namespace fluxop::oci
