// The decisions on cosign's legacy signature layout made without a registry:
// a layer's annotations read as a bundle, the simple-signing payload matched
// to the digest, the tags, the default signers. The layout as cosign writes
// it, and the registry I/O, are tests/signatures/cosign_test.sh's.
#include <doctest/doctest.h>

#include "core/base64.h"
#include "core/error.h"
#include "core/oci/referrers.h"
#include "core/signatures/image_signatures.h"

namespace fluxop::signatures {
namespace {

const std::string kDigest =
    "sha256:4fcfa45a9bccb47f7d20476e9dad5e7fe31b46246c165cef2ebbdefcaf16ac1d";

std::string payload_of(const std::string& digest) {
  return R"({"critical":{"identity":{"docker-reference":"r/x"},"image":{"docker-manifest-digest":")" +
         digest + R"("},"type":"cosign container image signature"},"optional":null})";
}

TEST_CASE("the tags cosign stores signatures under") {
  CHECK(signature_tag(kDigest) ==
        "sha256-4fcfa45a9bccb47f7d20476e9dad5e7fe31b46246c165cef2ebbdefcaf16ac1d.sig");
  CHECK(oci::referrers_tag(kDigest) ==
        "sha256-4fcfa45a9bccb47f7d20476e9dad5e7fe31b46246c165cef2ebbdefcaf16ac1d");
}

TEST_CASE("a simple-signing payload must name the digest") {
  CHECK_NOTHROW(check_simple_signing_payload(payload_of(kDigest), kDigest));
  std::string other = "sha256:" + std::string(64, '0');
  CHECK_THROWS_WITH_AS(check_simple_signing_payload(payload_of(other), kDigest),
                       doctest::Contains("digest: the signature is of"), Error);
  CHECK_THROWS_WITH_AS(check_simple_signing_payload(R"({"critical":{"type":"x"}})", kDigest),
                       "payload: not a cosign container image signature", Error);
  CHECK_THROWS_WITH_AS(check_simple_signing_payload("[1]", kDigest),
                       "payload: not a cosign container image signature", Error);
  CHECK_THROWS_WITH_AS(
      check_simple_signing_payload(
          R"({"critical":{"type":"cosign container image signature","image":{}}})", kDigest),
      "payload: critical.image.docker-manifest-digest: missing", Error);
}

TEST_CASE("a legacy signature layer as a bundle") {
  oci::Descriptor layer;
  std::string payload = payload_of(kDigest);
  SUBCASE("a key's: the signature, no certificate, no log") {
    layer.annotations["dev.cosignproject.cosign/signature"] = base64_encode("sig");
    sigstore::Bundle bundle = legacy_signature_bundle(layer, payload);
    CHECK(bundle.public_key);
    REQUIRE(bundle.message_signature);
    CHECK(bundle.message_signature->signature == "sig");
    CHECK(bundle.message_signature->digest == sigstore::sha256(payload));
    CHECK(bundle.tlog_entries.empty());
  }
  SUBCASE("no signature annotation") {
    CHECK_THROWS_WITH_AS(legacy_signature_bundle(layer, payload),
                         doctest::Contains("dev.cosignproject.cosign/signature: missing"), Error);
  }
  SUBCASE("a signature that is not base64") {
    layer.annotations["dev.cosignproject.cosign/signature"] = "%%%";
    CHECK_THROWS_WITH_AS(legacy_signature_bundle(layer, payload),
                         "dev.cosignproject.cosign/signature: not base64", Error);
  }
  SUBCASE("a certificate that is not one") {
    layer.annotations["dev.cosignproject.cosign/signature"] = base64_encode("sig");
    layer.annotations["dev.sigstore.cosign/certificate"] = "-----BEGIN CERTIFICATE-----\nx\n";
    CHECK_THROWS_WITH_AS(legacy_signature_bundle(layer, payload),
                         "dev.sigstore.cosign/certificate: not a PEM certificate", Error);
  }
  SUBCASE("the Rekor bundle annotation") {
    layer.annotations["dev.cosignproject.cosign/signature"] = base64_encode("sig");
    std::string body = base64_encode(R"({"kind":"hashedrekord","apiVersion":"0.0.1","spec":{}})");
    layer.annotations["dev.sigstore.cosign/bundle"] =
        R"({"SignedEntryTimestamp":")" + base64_encode("set") + R"(","Payload":{"body":")" + body +
        R"(","integratedTime":1700000000,"logIndex":42,"logID":"c0ffee"}})";
    sigstore::Bundle bundle = legacy_signature_bundle(layer, payload);
    REQUIRE(bundle.tlog_entries.size() == 1);
    const sigstore::TransparencyLogEntry& entry = bundle.tlog_entries[0];
    CHECK(entry.kind == "hashedrekord");
    CHECK(entry.version == "0.0.1");
    CHECK(entry.integrated_time == 1700000000);
    CHECK(entry.log_index == 42);
    CHECK(entry.log_id == std::string("\xc0\xff\xee"));
    CHECK(entry.signed_entry_timestamp == std::optional<std::string>("set"));
    layer.annotations["dev.sigstore.cosign/bundle"] = R"({"SignedEntryTimestamp":"c2V0"})";
    CHECK_THROWS_WITH_AS(legacy_signature_bundle(layer, payload),
                         doctest::Contains("not a Rekor bundle"), Error);
  }
}

TEST_CASE("the default signers") {
  CHECK(default_identity("ghcr.io/fluxcd/source-controller") == kFluxIdentity);
  CHECK(default_identity("docker.io/fluxcd/source-controller") == kFluxIdentity);
  CHECK(default_identity("ghcr.io/controlplaneio-fluxcd/alpine/source-controller") ==
        kControlPlaneIdentity);
  CHECK(default_identity("ghcr.io/fluxcdx/source-controller") == kControlPlaneIdentity);
  sigstore::Policy policy = github_actions_signer(kFluxIdentity);
  REQUIRE(policy.identity);
  CHECK(policy.identity->regexp);
  REQUIRE(policy.issuer);
  CHECK(policy.issuer->value == "https://token.actions.githubusercontent.com");
  CHECK_FALSE(policy.issuer->regexp);
}

}  // namespace
}  // namespace fluxop::signatures
