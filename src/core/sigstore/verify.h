// Verifying a Sigstore bundle for an artifact: the signature over it, the
// transparency log entries and timestamps that say when, and who signed —
// a certificate of a CA of the trusted root naming the expected identity
// and OIDC issuer (keyless), or the expected public key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sigstore/bundle.h"
#include "core/sigstore/trusted_root.h"

namespace fluxop::sigstore {

// The artifact: its bytes, or only its SHA-256 digest (then a message
// signature must be ECDSA or RSA, which sign the digest).
struct Artifact {
  std::optional<Bytes> bytes;
  Bytes sha256;  // raw, 32 bytes

  static Artifact of_bytes(Bytes bytes);
  static Artifact of_digest(Bytes sha256);
};

// An expected value, matched whole, or by an RE2 regular expression
// anywhere in it (as cosign's --certificate-identity-regexp: anchor with ^ and $).
struct Expected {
  std::string value;
  bool regexp = false;
};

struct Policy {
  // Keyless: the signer's identity (a SAN) and OIDC issuer.
  std::optional<Expected> identity;
  std::optional<Expected> issuer;
  // Or the public key (PEM) that signed.
  std::optional<std::string> public_key_pem;
};

// A time the signature is proven to have existed at, and who proves it.
struct ProvenTime {
  enum class Source { transparency_log, timestamp_authority };
  std::int64_t seconds = 0;
  Source source = Source::transparency_log;
};

struct Verification {
  std::string identity;  // empty for a key
  std::string issuer;
  std::vector<ProvenTime> times;  // proven by the logs and timestamp authorities
};

// The earliest of `times` (a log's before a timestamp authority's at the
// same second); nullopt when there is none.
std::optional<ProvenTime> earliest(const std::vector<ProvenTime>& times);

// Throws fluxop::Error naming what failed (the signature, the log entry,
// the timestamp, the chain, the SCT, the identity).
Verification verify_bundle(const Bundle& bundle, const Artifact& artifact, const Policy& policy,
                           const TrustedRoot& root, std::int64_t now);

}  // namespace fluxop::sigstore
