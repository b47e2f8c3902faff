#include "core/sigstore/tlog.h"

#include <nlohmann/json.hpp>

#include "core/base64.h"
#include "core/error.h"
#include "core/sigstore/proto_json.h"

namespace fluxop::sigstore {

namespace {

using nlohmann::json;

Bytes node_hash(const Bytes& left, const Bytes& right) {
  return sha256(std::string(1, '\x01') + left + right);
}

// The signer a log entry names (a PEM certificate or key, or DER), as DER.
Bytes signer_from_pem(std::string_view pem, bool certificate) {
  if (certificate) {
    Certificate decoded = certificate_from_pem(pem);
    return decoded ? certificate_der(decoded.get()) : Bytes();
  }
  PublicKey decoded = public_key_from_pem(pem);
  return decoded ? public_key_der(decoded.get()) : Bytes();
}

// Compares what the body recorded with the bundle, field by field.
class BodyMatcher {
 public:
  BodyMatcher(const TransparencyLogEntry& entry, const SignedContent& content, std::string name)
      : entry_(entry), content_(content), reader_(std::move(name)) {}

  void match() {
    json body = reader_.parse(entry_.body);
    std::string kind = reader_.string(body, "kind", "");
    std::string version = reader_.string(body, "apiVersion", "");
    if (kind != entry_.kind || version != entry_.version)
      reader_.fail("", "a " + kind + " " + version + " entry, its kindVersion says " + entry_.kind +
                           " " + entry_.version);
    const json& spec = reader_.object(body, "spec", "");
    if (kind == "hashedrekord" && version == "0.0.1") return hashedrekord_v001(spec);
    if (kind == "hashedrekord" && version == "0.0.2")
      return hashedrekord_v002(reader_.object(spec, "hashedRekordV002", "spec"));
    if (kind == "dsse" && version == "0.0.1") return dsse_v001(spec);
    if (kind == "dsse" && version == "0.0.2")
      return dsse_v002(reader_.object(spec, "dsseV002", "spec"));
    if (kind == "intoto" && version == "0.0.2") return intoto_v002(spec);
    reader_.fail("", "a " + kind + " " + version + " entry, which this fluxopctl cannot check");
  }

 private:
  [[noreturn]] void mismatch(const std::string& field, const std::string& what) const {
    reader_.fail(field, "does not match the bundle's " + what);
  }

  const Bytes& message_digest() const {
    if (content_.envelope != nullptr)
      reader_.fail("", "records a message signature, the bundle has a DSSE envelope");
    return content_.artifact_digest;
  }
  const DsseEnvelope& envelope() const {
    if (content_.envelope == nullptr)
      reader_.fail("", "records a DSSE envelope, the bundle has a message signature");
    return *content_.envelope;
  }

  // {"algorithm": "sha256", "value": "<hex>"}
  void hex_hash(const json& hash, const std::string& field, const Bytes& expected,
                const std::string& what) const {
    if (reader_.string(hash, "algorithm", field) != "sha256" ||
        reader_.string(hash, "value", field) != hex(expected))
      mismatch(field, what);
  }
  // {"algorithm": "SHA2_256", "digest": "<base64>"}
  void base64_hash(const json& hash, const std::string& field, const Bytes& expected,
                   const std::string& what) const {
    if (reader_.string(hash, "algorithm", field) != "SHA2_256" ||
        reader_.bytes(hash, "digest", field) != expected)
      mismatch(field, what);
  }
  // A v0.0.2 verifier: {"x509Certificate": {"rawBytes"}} or {"publicKey": {"rawBytes"}}.
  void verifier(const json& verifier, const std::string& field) const {
    const char* form = content_.signer_is_certificate ? "x509Certificate" : "publicKey";
    std::string here = ProtoJson::path(field, form);
    if (reader_.bytes(reader_.object(verifier, form, field), "rawBytes", here) != content_.signer)
      mismatch(here, content_.signer_is_certificate ? "certificate" : "public key");
  }
  void pem_signer(const Bytes& pem, const std::string& field) const {
    if (signer_from_pem(pem, content_.signer_is_certificate) != content_.signer)
      mismatch(field, content_.signer_is_certificate ? "certificate" : "public key");
  }

  void hashedrekord_v001(const json& spec) const {
    hex_hash(reader_.object(reader_.object(spec, "data", "spec"), "hash", "spec.data"),
             "spec.data.hash", message_digest(), "artifact");
    const json& signature = reader_.object(spec, "signature", "spec");
    if (reader_.bytes(signature, "content", "spec.signature") != content_.signature)
      mismatch("spec.signature.content", "signature");
    pem_signer(reader_.bytes(reader_.object(signature, "publicKey", "spec.signature"), "content",
                             "spec.signature.publicKey"),
               "spec.signature.publicKey.content");
  }

  void hashedrekord_v002(const json& spec) const {
    const std::string field = "spec.hashedRekordV002";
    Bytes digest =
        content_.envelope != nullptr
            ? sha256(dsse_pae(content_.envelope->payload_type, content_.envelope->payload))
            : message_digest();
    base64_hash(reader_.object(spec, "data", field), field + ".data", digest,
                content_.envelope != nullptr ? "envelope" : "artifact");
    const json& signature = reader_.object(spec, "signature", field);
    if (reader_.bytes(signature, "content", field + ".signature") != content_.signature)
      mismatch(field + ".signature.content", "signature");
    verifier(reader_.object(signature, "verifier", field + ".signature"),
             field + ".signature.verifier");
  }

  // Each of the envelope's signatures, once, and no other.
  void signatures(const json& list, const std::string& field, const char* signature_key,
                  bool v002) const {
    const DsseEnvelope& dsse = envelope();
    const json& items = reader_.array(list, "signatures", "");
    if (items.size() != dsse.signatures.size()) mismatch(field, "envelope's signatures");
    for (std::size_t i = 0; i < items.size(); ++i) {
      std::string here = ProtoJson::at(field, i);
      if (reader_.bytes(items[i], signature_key, here) != dsse.signatures[i])
        mismatch(here, "envelope's signatures");
      if (v002)
        verifier(reader_.object(items[i], "verifier", here), here + ".verifier");
      else
        pem_signer(reader_.bytes(items[i], "verifier", here), here + ".verifier");
    }
  }

  void dsse_v001(const json& spec) const {
    const DsseEnvelope& dsse = envelope();
    hex_hash(reader_.object(spec, "payloadHash", "spec"), "spec.payloadHash", sha256(dsse.payload),
             "envelope's payload");
    signatures(spec, "spec.signatures", "signature", false);
  }

  void dsse_v002(const json& spec) const {
    const DsseEnvelope& dsse = envelope();
    base64_hash(reader_.object(spec, "payloadHash", "spec.dsseV002"), "spec.dsseV002.payloadHash",
                sha256(dsse.payload), "envelope's payload");
    signatures(spec, "spec.dsseV002.signatures", "content", true);
  }

  // The envelope recorded whole, its payload and signatures base64-encoded once more.
  void intoto_v002(const json& spec) const {
    const DsseEnvelope& dsse = envelope();
    const json& content = reader_.object(spec, "content", "spec");
    hex_hash(reader_.object(content, "payloadHash", "spec.content"), "spec.content.payloadHash",
             sha256(dsse.payload), "envelope's payload");
    const std::string field = "spec.content.envelope";
    const json& recorded = reader_.object(content, "envelope", "spec.content");
    if (reader_.string(recorded, "payloadType", field) != dsse.payload_type)
      mismatch(field + ".payloadType", "envelope's payload type");
    auto payload = base64_decode(reader_.bytes(recorded, "payload", field));
    if (!payload || *payload != dsse.payload) mismatch(field + ".payload", "envelope's payload");
    const json& items = reader_.array(recorded, "signatures", field);
    if (items.size() != dsse.signatures.size()) mismatch(field, "envelope's signatures");
    for (std::size_t i = 0; i < items.size(); ++i) {
      std::string here = ProtoJson::at(field + ".signatures", i);
      auto signature = base64_decode(reader_.bytes(items[i], "sig", here));
      if (!signature || *signature != dsse.signatures[i]) mismatch(here, "envelope's signatures");
      pem_signer(reader_.bytes(items[i], "publicKey", here), here + ".publicKey");
    }
  }

  const TransparencyLogEntry& entry_;
  const SignedContent& content_;
  ProtoJson reader_;
};

}  // namespace

Bytes dsse_pae(std::string_view payload_type, std::string_view payload) {
  return "DSSEv1 " + std::to_string(payload_type.size()) + " " + std::string(payload_type) + " " +
         std::to_string(payload.size()) + " " + std::string(payload);
}

bool verify_inclusion(std::uint64_t index, std::uint64_t size, const Bytes& leaf_hash,
                      const std::vector<Bytes>& hashes, const Bytes& root) {
  if (index >= size) return false;
  std::uint64_t fn = index;
  std::uint64_t sn = size - 1;
  Bytes r = leaf_hash;
  for (const Bytes& p : hashes) {
    if (sn == 0) return false;
    if ((fn & 1) != 0 || fn == sn) {
      r = node_hash(p, r);
      while ((fn & 1) == 0 && fn != 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      r = node_hash(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn == 0 && r == root;
}

void verify_checkpoint(std::string_view note, const LogKey& log, std::int64_t tree_size,
                       const Bytes& root_hash) {
  std::size_t blank = note.find("\n\n");
  if (blank == std::string_view::npos) throw Error("checkpoint: no signature");
  std::string_view text = note.substr(0, blank + 1);
  std::vector<std::string_view> lines;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  if (lines.size() < 3 || lines[0].empty())
    throw Error("checkpoint: needs an origin, a size and a root hash");
  if (lines[1] != std::to_string(tree_size))
    throw Error("checkpoint: its tree size is not the proof's");
  auto root = base64_decode(lines[2]);
  if (!root || *root != root_hash) throw Error("checkpoint: its root hash is not the proof's");
  // The log signs under its name, the origin (Rekor v1 adds " - <tree id>").
  std::string_view origin = lines[0];
  std::string_view name = origin.substr(0, origin.find(" - "));
  constexpr std::string_view kDash = "\xE2\x80\x94 ";  // "— "
  std::string_view signatures = note.substr(blank + 2);
  bool signed_by_log = false;
  while (!signatures.empty()) {
    std::size_t end = signatures.find('\n');
    if (end == std::string_view::npos) throw Error("checkpoint: a signature line is not ended");
    std::string_view line = signatures.substr(0, end);
    signatures.remove_prefix(end + 1);
    if (line.rfind(kDash, 0) != 0) throw Error("checkpoint: a signature line without \"— \"");
    line.remove_prefix(kDash.size());
    std::size_t space = line.rfind(' ');
    if (space == std::string_view::npos)
      throw Error("checkpoint: a signature line without a key name");
    auto signature = base64_decode(line.substr(space + 1));
    if (!signature || signature->size() <= 4) throw Error("checkpoint: a signature is not base64");
    if (line.substr(0, space) != name || signature->compare(0, 4, log.log_id, 0, 4) != 0) continue;
    if (!verify_signature(log.key.get(), text, signature->substr(4)))
      throw Error("checkpoint: the log's signature does not verify");
    signed_by_log = true;
  }
  if (!signed_by_log) throw Error("checkpoint: not signed by the log");
}

std::optional<std::int64_t> verify_log_entry(const TransparencyLogEntry& entry, int bundle_minor,
                                             const TrustedRoot& root,
                                             const SignedContent& content) {
  const LogKey* log = root.transparency_log(entry.log_id);
  if (log == nullptr)
    throw Error("log entry: a transparency log the trusted root has not (log id " +
                base64_encode(entry.log_id) + ")");
  bool rekor_v2 = entry.version == "0.0.2" && entry.kind != "intoto";
  std::optional<std::int64_t> time;
  if (entry.signed_entry_timestamp) {
    std::string signed_data = R"({"body":")" + base64_encode(entry.body) +
                              R"(","integratedTime":)" + std::to_string(entry.integrated_time) +
                              R"(,"logID":")" + hex(entry.log_id) + R"(","logIndex":)" +
                              std::to_string(entry.log_index) + "}";
    if (!verify_signature(log->key.get(), signed_data, *entry.signed_entry_timestamp))
      throw Error("log entry: its signed entry timestamp does not verify with the log's key");
    time = entry.integrated_time;
  } else if (bundle_minor == 1) {
    throw Error("log entry: a v0.1 bundle needs a signed entry timestamp");
  }
  if (entry.inclusion_proof) {
    const InclusionProof& proof = *entry.inclusion_proof;
    if (!verify_inclusion(static_cast<std::uint64_t>(proof.log_index),
                          static_cast<std::uint64_t>(proof.tree_size),
                          sha256(std::string(1, '\0') + entry.body), proof.hashes, proof.root_hash))
      throw Error("log entry: its inclusion proof does not prove it");
    // The root hash proves nothing until the log has signed it. A v0.1
    // bundle's proof may come without (its signed entry timestamp vouches).
    if (proof.checkpoint)
      verify_checkpoint(*proof.checkpoint, *log, proof.tree_size, proof.root_hash);
    else if (bundle_minor >= 2 || rekor_v2)
      throw Error("log entry: its inclusion proof has no checkpoint");
  } else if (bundle_minor >= 2 || rekor_v2) {
    throw Error("log entry: no inclusion proof");
  }
  if (time && !log->valid.contains(*time))
    throw Error("log entry: integrated at a time its log's key is not trusted for");
  BodyMatcher(entry, content, "log entry").match();
  return time;
}

}  // namespace fluxop::sigstore
