#include "core/sigstore/verify.h"

#include <re2/re2.h>
#include <algorithm>

#include "core/error.h"
#include "core/file.h"
#include "core/peer_json.h"
#include "core/rfc3339.h"
#include "core/sigstore/certificate.h"
#include "core/sigstore/timestamp.h"
#include "core/sigstore/tlog.h"

namespace fluxop::sigstore {

namespace {

constexpr std::string_view kInTotoPayloadType = "application/vnd.in-toto+json";

bool matches(const Expected& expected, const std::string& value) {
  if (!expected.regexp) return value == expected.value;
  RE2 pattern(expected.value, RE2::Quiet);
  if (!pattern.ok()) throw Error("invalid regular expression " + quote(expected.value));
  return RE2::PartialMatch(value, pattern);
}

std::string describe(const Expected& expected) {
  return (expected.regexp ? "matching " : "") + quote(expected.value, 120);
}

// An in-toto statement names the artifact among its subjects, by SHA-256.
void check_statement_subject(const DsseEnvelope& envelope, const Artifact& artifact) {
  if (envelope.payload_type != kInTotoPayloadType)
    throw Error("the DSSE envelope's payload is not an in-toto statement (" +
                quote(envelope.payload_type) + ")");
  nlohmann::json statement = parse_peer_json(envelope.payload);
  if (!statement.is_object()) throw Error("the in-toto statement is not a JSON object");
  std::string wanted = hex(artifact.sha256);
  if (auto subjects = statement.find("subject");
      subjects != statement.end() && subjects->is_array())
    for (const auto& subject : *subjects) {
      if (!subject.is_object()) continue;
      auto digest = subject.find("digest");
      if (digest == subject.end() || !digest->is_object()) continue;
      auto sha = digest->find("sha256");
      if (sha != digest->end() && sha->is_string() && sha->get<std::string>() == wanted) return;
    }
  throw Error("the in-toto statement has no subject of digest sha256:" + wanted);
}

}  // namespace

Artifact Artifact::of_bytes(Bytes bytes) {
  Artifact artifact;
  artifact.sha256 = sigstore::sha256(bytes);
  artifact.bytes = std::move(bytes);
  return artifact;
}

Artifact Artifact::of_digest(Bytes sha256) {
  Artifact artifact;
  artifact.sha256 = std::move(sha256);
  return artifact;
}

std::optional<ProvenTime> earliest(const std::vector<ProvenTime>& times) {
  if (times.empty()) return std::nullopt;
  return *std::min_element(
      times.begin(), times.end(), [](const ProvenTime& a, const ProvenTime& b) {
        return a.seconds < b.seconds || (a.seconds == b.seconds && a.source < b.source);
      });
}

Verification verify_bundle(const Bundle& bundle, const Artifact& artifact, const Policy& policy,
                           const TrustedRoot& root, std::int64_t now) {
  Verification result;
  bool keyless = !policy.public_key_pem;
  // The signer.
  PublicKey key;
  Certificate leaf;
  SignedContent content;
  if (keyless) {
    if (!policy.identity || !policy.issuer)
      throw Error("keyless verification needs the expected identity and OIDC issuer");
    if (bundle.public_key) throw Error("the bundle is signed by a key: verify it with --key");
    for (std::size_t i = 0; i < bundle.certificates.size(); ++i) {
      Certificate certificate = certificate_from_der(bundle.certificates[i]);
      if (!certificate) throw Error("certificate " + std::to_string(i) + ": not a DER certificate");
      if (self_signed(certificate.get()))
        throw Error("the bundle's certificates hold a root: only the trusted root names roots");
      if (i == 0) leaf = std::move(certificate);
    }
    if (!leaf) throw Error("the bundle has no certificate");
    content.signer = bundle.certificates[0];
    key.reset(X509_get_pubkey(leaf.get()));
    if (!key) throw Error("certificate: its public key cannot be read");
  } else {
    if (!bundle.public_key)
      throw Error("the bundle is signed with a certificate, not by the key given");
    key = public_key_from_pem(*policy.public_key_pem);
    if (!key) throw Error("the key given is not a PEM public key");
    content.signer = public_key_der(key.get());
    content.signer_is_certificate = false;
  }

  // The signature over the artifact, by the hash its key signs with.
  HashAlgorithm hashed = signing_hash(key.get());
  if (bundle.message_signature) {
    const MessageSignature& message = *bundle.message_signature;
    bool other_digest =
        message.digest_algorithm == HashAlgorithm::sha256
            ? message.digest != artifact.sha256
            : artifact.bytes && message.digest_algorithm &&
                  message.digest != hash(*message.digest_algorithm, *artifact.bytes);
    if (other_digest) throw Error("the bundle's message digest is not the artifact's");
    bool valid = false;
    if (artifact.bytes) {
      valid = verify_signature(key.get(), *artifact.bytes, message.signature, hashed);
    } else if (hashed == HashAlgorithm::sha256) {
      valid = verify_prehashed(key.get(), artifact.sha256, message.signature);
    } else {
      throw Error(
          "signature: its key signs with SHA-384 or SHA-512, which is checked over the artifact "
          "itself, not over its SHA-256 digest (an artifact given as a digest, or over 64 MiB)");
    }
    if (!valid) throw Error("signature: does not verify over the artifact");
    content.signature = message.signature;
    content.artifact_digest = artifact.sha256;
  } else {
    const DsseEnvelope& envelope = *bundle.dsse_envelope;
    if (envelope.signatures.size() != 1)
      throw Error("the DSSE envelope has " + std::to_string(envelope.signatures.size()) +
                  " signatures, not one");
    if (!verify_signature(key.get(), dsse_pae(envelope.payload_type, envelope.payload),
                          envelope.signatures[0], hashed))
      throw Error("signature: the DSSE envelope's does not verify");
    check_statement_subject(envelope, artifact);
    content.signature = envelope.signatures[0];
    content.envelope = &envelope;
  }

  // When: the logs and the timestamp authorities. A keyless signature must
  // be in a transparency log where the trusted root names one; a private
  // Sigstore whose root names none (no Rekor) proves the time by its
  // timestamp authorities alone, checked below.
  if (keyless && bundle.tlog_entries.empty() && !root.transparency_logs.empty())
    throw Error("the bundle has no transparency log entry");
  for (const TransparencyLogEntry& entry : bundle.tlog_entries) {
    if (entry.integrated_time > now)
      throw Error("log entry: integrated in the future, at " +
                  utc_rfc3339(static_cast<std::time_t>(entry.integrated_time)));
    if (auto time = verify_log_entry(entry, bundle.minor_version, root, content))
      result.times.push_back({*time, ProvenTime::Source::transparency_log});
  }
  for (const Bytes& timestamp : bundle.timestamps)
    result.times.push_back(
        {verify_timestamp(timestamp, content.signature, root.timestamp_authorities),
         ProvenTime::Source::timestamp_authority});
  if (!keyless) return result;

  // Who: the certificate, valid at every time proven, and what it names.
  if (result.times.empty())
    throw Error(
        "nothing proves when it was signed: no signed entry timestamp nor RFC 3161 timestamp");
  X509* issuer = nullptr;
  for (const ProvenTime& time : result.times)
    issuer = verify_chain(leaf.get(), root.certificate_authorities, time.seconds);
  // Likewise SCTs: required where the trusted root names CT logs; a private
  // CA whose root names none logs its certificates nowhere.
  if (!root.ct_logs.empty()) verify_embedded_scts(leaf.get(), issuer, root.ct_logs, now);
  if (!certificate_signs_code(leaf.get())) throw Error("certificate: not for code signing");
  std::vector<std::string> identities = certificate_identities(leaf.get());
  for (const std::string& identity : identities)
    if (matches(*policy.identity, identity)) result.identity = identity;
  if (result.identity.empty())
    throw Error("certificate: signed by " +
                (identities.empty() ? std::string("no identity") : quote(identities[0], 120)) +
                ", not " + describe(*policy.identity));
  result.issuer = certificate_oidc_issuer(leaf.get());
  if (!matches(*policy.issuer, result.issuer))
    throw Error("certificate: issued by " + quote(result.issuer, 120) + ", not " +
                describe(*policy.issuer));
  return result;
}

}  // namespace fluxop::sigstore
