// What a --verify record states: the policy in effect, so that a record
// sealed under one policy opens for no other.
#include "core/reconcile/artifacts.h"

#include <doctest/doctest.h>

#include "core/cache_seal.h"
#include "core/signatures/image_signatures.h"

namespace fluxop::reconcile {
namespace {

const oci::Reference kImage{"ghcr.io", "fluxcd/source-controller", "v1.9.0",
                            "sha256:" + std::string(64, 'a')};

std::string statement(const ArtifactVerification& verify, std::string_view default_identity) {
  return verified_statement(verify, verification_policy(verify, default_identity), kImage,
                            kImage.digest);
}

TEST_CASE("a verified record states the default signer in effect, and opens for no other") {
  ArtifactVerification verify;
  verify.enabled = true;
  std::string by_flux = statement(verify, signatures::kFluxIdentity);
  std::string by_control_plane = statement(verify, signatures::kControlPlaneIdentity);
  CHECK(by_flux.find(std::string(signatures::kFluxIdentity)) != std::string::npos);
  CHECK(by_flux.find(std::string(signatures::kGitHubActionsIssuer)) != std::string::npos);

  CacheSeal seal("a key of 32 bytes, as the user's");
  std::string record = seal.seal(by_flux);
  CHECK(seal.opens(by_flux, record));
  CHECK_FALSE(seal.opens(by_control_plane, record));

  // The flags' identity in place of the default: the same policy when it is
  // the default's, another when it is not.
  ArtifactVerification flux_flag = verify;
  flux_flag.identity_regexp = signatures::kFluxIdentity;
  CHECK(seal.opens(statement(flux_flag, signatures::kControlPlaneIdentity), record));
  ArtifactVerification other_flag = verify;
  other_flag.identity_regexp = "^https://github\\.com/example/.*$";
  CHECK_FALSE(seal.opens(statement(other_flag, signatures::kFluxIdentity), record));

  // Another issuer, a key, another trusted root: each another policy.
  ArtifactVerification issuer = verify;
  issuer.issuer = "https://issuer.example";
  CHECK_FALSE(seal.opens(statement(issuer, signatures::kFluxIdentity), record));
  ArtifactVerification key = verify;
  key.key_pem = "-----BEGIN PUBLIC KEY-----\n...\n-----END PUBLIC KEY-----\n";
  std::string by_key = statement(key, signatures::kFluxIdentity);
  CHECK_FALSE(seal.opens(by_key, record));
  CHECK(by_key == statement(key, signatures::kControlPlaneIdentity));  // a key names no identity
  ArtifactVerification root = verify;
  root.trusted_root = "{}";
  CHECK_FALSE(seal.opens(statement(root, signatures::kFluxIdentity), record));

  // Another digest or repository of the same policy.
  oci::Reference other = kImage;
  other.digest = "sha256:" + std::string(64, 'b');
  CHECK_FALSE(
      seal.opens(verified_statement(verify, verification_policy(verify, signatures::kFluxIdentity),
                                    other, other.digest),
                 record));
}

}  // namespace
}  // namespace fluxop::reconcile
