#include "core/sigstore/bundle.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/sigstore/proto_json.h"

namespace fluxop::sigstore {

namespace {

using nlohmann::json;

// The media types of the versions we read: the first form of each, and the
// one 0.3 introduced.
int minor_version_of(std::string_view media_type) {
  constexpr std::string_view kLegacy = "application/vnd.dev.sigstore.bundle+json;version=0.";
  constexpr std::string_view kCurrent = "application/vnd.dev.sigstore.bundle.v0.";
  std::string_view rest;
  if (media_type.rfind(kLegacy, 0) == 0) {
    rest = media_type.substr(kLegacy.size());
  } else if (media_type.rfind(kCurrent, 0) == 0 && media_type.size() > kCurrent.size() &&
             media_type.substr(kCurrent.size() + 1) == "+json") {
    rest = media_type.substr(kCurrent.size(), 1);
  }
  if (rest == "1") return 1;
  if (rest == "2") return 2;
  if (rest == "3") return 3;
  return 0;
}

InclusionProof read_proof(const ProtoJson& reader, const json& proof, const std::string& field) {
  InclusionProof out;
  out.log_index = reader.integer(proof, "logIndex", field);
  out.root_hash = reader.bytes(proof, "rootHash", field);
  out.tree_size = reader.integer(proof, "treeSize", field);
  const json& hashes = reader.array(proof, "hashes", field);
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    out.hashes.push_back(reader.decode(hashes[i], ProtoJson::at(field + ".hashes", i)));
  }
  if (out.log_index < 0 || out.tree_size < 0) reader.fail(field, "negative log index or tree size");
  if (reader.find(proof, "checkpoint"))
    out.checkpoint =
        reader.string(reader.object(proof, "checkpoint", field), "envelope", field + ".checkpoint");
  return out;
}

TransparencyLogEntry read_entry(const ProtoJson& reader, const json& entry,
                                const std::string& field) {
  if (!entry.is_object()) reader.fail(field, "not an object");
  TransparencyLogEntry out;
  out.log_index = reader.integer(entry, "logIndex", field);
  if (out.log_index < 0) reader.fail(field + ".logIndex", "negative");
  out.log_id = reader.bytes(reader.object(entry, "logId", field), "keyId", field + ".logId");
  const json& kind = reader.object(entry, "kindVersion", field);
  out.kind = reader.string(kind, "kind", field + ".kindVersion");
  out.version = reader.string(kind, "version", field + ".kindVersion");
  if (reader.find(entry, "integratedTime"))
    out.integrated_time = reader.integer(entry, "integratedTime", field);
  if (out.integrated_time < 0) reader.fail(field + ".integratedTime", "negative");
  if (reader.find(entry, "inclusionPromise"))
    out.signed_entry_timestamp = reader.bytes(reader.object(entry, "inclusionPromise", field),
                                              "signedEntryTimestamp", field + ".inclusionPromise");
  if (reader.find(entry, "inclusionProof"))
    out.inclusion_proof = read_proof(reader, reader.object(entry, "inclusionProof", field),
                                     field + ".inclusionProof");
  out.body = reader.bytes(entry, "canonicalizedBody", field);
  return out;
}

void read_material(const ProtoJson& reader, const json& material, Bundle& bundle) {
  const std::string field = "verificationMaterial";
  int forms = 0;
  if (const json* chain = reader.find(material, "x509CertificateChain")) {
    ++forms;
    std::string here = field + ".x509CertificateChain";
    const json& certificates = reader.array(*chain, "certificates", here);
    for (std::size_t i = 0; i < certificates.size(); ++i)
      bundle.certificates.push_back(
          reader.bytes(certificates[i], "rawBytes", ProtoJson::at(here + ".certificates", i)));
    if (bundle.certificates.empty()) reader.fail(here + ".certificates", "empty");
  }
  if (reader.find(material, "certificate")) {
    ++forms;
    bundle.certificates.push_back(reader.bytes(reader.object(material, "certificate", field),
                                               "rawBytes", field + ".certificate"));
  }
  if (reader.find(material, "publicKey")) {
    ++forms;
    bundle.public_key = true;
  }
  if (forms != 1)
    reader.fail(field, "needs one of x509CertificateChain, certificate and publicKey");
  const json& entries = reader.array(material, "tlogEntries", field);
  for (std::size_t i = 0; i < entries.size(); ++i)
    bundle.tlog_entries.push_back(
        read_entry(reader, entries[i], ProtoJson::at(field + ".tlogEntries", i)));
  if (const json* data = reader.find(material, "timestampVerificationData")) {
    std::string here = field + ".timestampVerificationData";
    const json& timestamps = reader.array(*data, "rfc3161Timestamps", here);
    for (std::size_t i = 0; i < timestamps.size(); ++i)
      bundle.timestamps.push_back(reader.bytes(timestamps[i], "signedTimestamp",
                                               ProtoJson::at(here + ".rfc3161Timestamps", i)));
  }
}

}  // namespace

Bundle parse_bundle(std::string_view text, const std::string& name) {
  ProtoJson reader(name);
  json document = reader.parse(text);
  Bundle bundle;
  std::string media_type = reader.string(document, "mediaType", "");
  bundle.minor_version = minor_version_of(media_type);
  if (bundle.minor_version == 0)
    reader.fail("mediaType",
                "not a bundle version this fluxopctl reads (0.1 to 0.3): " + quote(media_type));
  read_material(reader, reader.object(document, "verificationMaterial", ""), bundle);
  const json* message = reader.find(document, "messageSignature");
  const json* envelope = reader.find(document, "dsseEnvelope");
  if ((message != nullptr) == (envelope != nullptr))
    reader.fail("", "needs one of messageSignature and dsseEnvelope");
  if (message != nullptr) {
    MessageSignature signature;
    // cosign writes an empty one for Ed25519, which signs the message itself.
    const json* digest = reader.find(*message, "messageDigest");
    if (digest && !(digest->is_object() && digest->empty())) {
      std::string algorithm = reader.string(*digest, "algorithm", "messageSignature.messageDigest");
      signature.digest_algorithm = hash_algorithm(algorithm);
      if (!signature.digest_algorithm)
        reader.fail("messageSignature.messageDigest.algorithm",
                    "not supported: " + quote(algorithm));
      signature.digest = reader.bytes(*digest, "digest", "messageSignature.messageDigest");
    }
    signature.signature = reader.bytes(*message, "signature", "messageSignature");
    bundle.message_signature = std::move(signature);
  } else {
    DsseEnvelope dsse;
    dsse.payload = reader.bytes(*envelope, "payload", "dsseEnvelope");
    dsse.payload_type = reader.string(*envelope, "payloadType", "dsseEnvelope");
    const json& signatures = reader.array(*envelope, "signatures", "dsseEnvelope");
    for (std::size_t i = 0; i < signatures.size(); ++i)
      dsse.signatures.push_back(
          reader.bytes(signatures[i], "sig", ProtoJson::at("dsseEnvelope.signatures", i)));
    bundle.dsse_envelope = std::move(dsse);
  }
  return bundle;
}

}  // namespace fluxop::sigstore
