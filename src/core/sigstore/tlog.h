// A transparency log (Rekor v1 and v2) entry of a bundle: that the log has
// it (signed entry timestamp, or inclusion proof up to a checkpoint the log
// signed), and that what it logged is what the bundle signed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/sigstore/bundle.h"
#include "core/sigstore/trusted_root.h"

namespace fluxop::sigstore {

// What a log entry must have recorded.
struct SignedContent {
  Bytes signature;  // the message signature, or the envelope's one signature
  Bytes signer;     // DER: the signing certificate, or the public key
  bool signer_is_certificate = true;
  Bytes artifact_digest;                   // SHA-256, of a message signature's artifact
  const DsseEnvelope* envelope = nullptr;  // or the envelope signed
};

// Checks `entry` against its log in `root` and `content`; the time the log
// vouches for (its integrated time, under a verified signed entry timestamp)
// when it does. Throws fluxop::Error saying what failed.
std::optional<std::int64_t> verify_log_entry(const TransparencyLogEntry& entry, int bundle_minor,
                                             const TrustedRoot& root, const SignedContent& content);

// The DSSE pre-authentication encoding, what an envelope's signatures sign.
Bytes dsse_pae(std::string_view payload_type, std::string_view payload);

// RFC 9162 2.1.3.2: whether `hashes` prove the leaf `leaf_hash` at `index`
// in the tree of `size` leaves whose root is `root`.
bool verify_inclusion(std::uint64_t index, std::uint64_t size, const Bytes& leaf_hash,
                      const std::vector<Bytes>& hashes, const Bytes& root);

// A checkpoint (a C2SP signed note) of `log`: its origin, size and root
// hash as the proof says, signed by the log's key (other signatures, a
// witness's, are ignored). Throws fluxop::Error saying what failed.
void verify_checkpoint(std::string_view note, const LogKey& log, std::int64_t tree_size,
                       const Bytes& root_hash);

}  // namespace fluxop::sigstore
