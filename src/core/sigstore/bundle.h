// A Sigstore bundle (application/vnd.dev.sigstore.bundle, versions 0.1 to
// 0.3): what was signed (a message signature or a DSSE envelope), by what
// (a certificate chain or a public key), and the proofs of when (the
// transparency log entries, RFC 3161 timestamps). Decoding checks the shape
// only; verify.h decides whether it proves anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sigstore/crypto.h"

namespace fluxop::sigstore {

struct InclusionProof {
  std::int64_t log_index = 0;  // in the tree the proof is for
  Bytes root_hash;
  std::int64_t tree_size = 0;
  std::vector<Bytes> hashes;
  std::optional<std::string> checkpoint;  // a signed note (C2SP tlog-checkpoint)
};

struct TransparencyLogEntry {
  std::int64_t log_index = 0;
  Bytes log_id;
  std::string kind;                  // hashedrekord, dsse, intoto
  std::string version;               // 0.0.1, 0.0.2
  std::int64_t integrated_time = 0;  // 0: none (Rekor v2)
  std::optional<Bytes> signed_entry_timestamp;
  std::optional<InclusionProof> inclusion_proof;
  Bytes body;  // canonicalizedBody, decoded
};

struct MessageSignature {
  std::optional<HashAlgorithm> digest_algorithm;  // of `digest`, when the bundle has one
  Bytes digest;
  Bytes signature;
};

struct DsseEnvelope {
  Bytes payload;
  std::string payload_type;
  std::vector<Bytes> signatures;
};

struct Bundle {
  int minor_version = 0;            // 1, 2 or 3 (of 0.x)
  std::vector<Bytes> certificates;  // DER, the signer's first; empty when signed by a key
  bool public_key = false;          // signed by a key the verifier supplies
  std::vector<TransparencyLogEntry> tlog_entries;
  std::vector<Bytes> timestamps;  // RFC 3161 responses, DER
  std::optional<MessageSignature> message_signature;
  std::optional<DsseEnvelope> dsse_envelope;
};

// Throws fluxop::Error "<name>: <field>: <what is wrong>".
Bundle parse_bundle(std::string_view json, const std::string& name);

}  // namespace fluxop::sigstore
