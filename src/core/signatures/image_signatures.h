// The Sigstore signatures of an image or artifact in a registry, where
// cosign puts them: the legacy tag `sha256-<hex>.sig` (one simple-signing
// payload per layer, its signature, certificate and Rekor entry in the
// layer's annotations), and Sigstore bundles attached as OCI referrers (the
// referrers API, or its tag fallback `sha256-<hex>`). Found through the OCI
// client, verified by the sigstore layer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/oci/mirror.h"
#include "core/oci/registry.h"
#include "core/sigstore/verify.h"

namespace fluxop::signatures {

struct VerifiedSignature {
  std::string reference;  // oci://registry/repository@digest
  std::string digest;     // the manifest's (an index's, for a multi-platform image)
  std::string identity;   // the certificate's; empty when a key signed
  std::string issuer;
  // The earliest a log or timestamp authority proves, and which proves it.
  std::optional<sigstore::ProvenTime> time;
  std::string found_in;  // the tag or referrer manifest that held the signature
};

// Verifies that `ref` (its digest; a tag is resolved) is signed as `policy`
// says: at least one of its signatures verifies. Throws fluxop::Error
// "<ref>: ..." saying, for each signature found, what failed (the
// signature, the payload's digest, the log entry, the chain, the SCT, the
// identity expected and found), or that it has none.
VerifiedSignature verify_signature(oci::RegistryClient& client, const oci::Reference& ref,
                                   const sigstore::Policy& policy,
                                   const sigstore::TrustedRoot& root, std::int64_t now);

// Who signs what Flux installs, by default: the GitHub Actions workflows of
// the controlplaneio-fluxcd organization (the distribution artifact, the
// enterprise images) and of fluxcd (the upstream images), each through the
// GitHub Actions OIDC issuer.
inline constexpr std::string_view kGitHubActionsIssuer =
    "https://token.actions.githubusercontent.com";
inline constexpr std::string_view kControlPlaneIdentity =
    "^https://github\\.com/controlplaneio-fluxcd/.*$";
inline constexpr std::string_view kFluxIdentity = "^https://github\\.com/fluxcd/.*$";
// The identity that signs what is published as `source` (HOST/REPOSITORY,
// as the image catalog names an image): fluxcd's for the upstream images
// (ghcr.io/fluxcd/, docker.io/fluxcd/), controlplaneio-fluxcd's for the rest
// (the enterprise images, the distribution artifact).
std::string_view default_identity(std::string_view source);
// The policy of a GitHub Actions workflow whose identity matches `identity_regexp`.
sigstore::Policy github_actions_signer(std::string_view identity_regexp);

// The signatures cosign stored beside each of `copies`' sources (the
// `.sig` tag; the referrers tag fallback too with `referrers_tags`), each a
// copy to the same destination repository under the same tag, and the
// bundles its referrers API lists, by digest: a mirror then verifies as its
// source does. A source without them adds nothing.
std::vector<oci::MirrorCopy> signature_copies(oci::RegistryClient& client,
                                              const std::vector<oci::MirrorCopy>& copies,
                                              bool referrers_tags);

// cosign's legacy signature tag for `digest` ("sha256:<hex>"): "sha256-<hex>.sig".
std::string signature_tag(std::string_view digest);

// A layer of a `.sig` manifest (its annotations) as the bundle it amounts to:
// a message signature over the payload, the certificate (keyless) or a key,
// and the Rekor entry of cosign's bundle annotation, when there is one.
// Throws fluxop::Error naming the annotation that is wrong.
sigstore::Bundle legacy_signature_bundle(const oci::Descriptor& layer, const std::string& payload);

// Throws fluxop::Error unless the simple-signing `payload` is a container
// image signature of `digest`.
void check_simple_signing_payload(std::string_view payload, const std::string& digest);

}  // namespace fluxop::signatures
