// The decisions of the Sigstore verifier on inputs made here: Merkle proofs,
// checkpoints, the trusted root's and the bundle's shapes, key-based
// verification. Real bundles (keyless, Rekor v1 and v2, timestamps) are the
// conformance suite's (tests/sigstore/conformance_test.sh).
#include <doctest/doctest.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "core/base64.h"
#include "core/error.h"
#include "core/sigstore/tlog.h"
#include "core/sigstore/verify.h"

namespace fluxop::sigstore {
namespace {

Bytes leaf_hash(const Bytes& data) { return sha256(std::string(1, '\0') + data); }

// RFC 6962 2.1: the tree's hash over leaves [begin, end).
Bytes tree_hash(const std::vector<Bytes>& leaves, std::size_t begin, std::size_t end) {
  if (end - begin == 1) return leaf_hash(leaves[begin]);
  std::size_t split = 1;
  while (split * 2 < end - begin) split *= 2;
  return sha256("\x01" + tree_hash(leaves, begin, begin + split) +
                tree_hash(leaves, begin + split, end));
}

// RFC 6962 2.1.1: the audit path of leaf m in leaves [begin, end).
std::vector<Bytes> audit_path(const std::vector<Bytes>& leaves, std::size_t m, std::size_t begin,
                              std::size_t end) {
  if (end - begin == 1) return {};
  std::size_t split = 1;
  while (split * 2 < end - begin) split *= 2;
  std::vector<Bytes> path;
  if (m < split) {
    path = audit_path(leaves, m, begin, begin + split);
    path.push_back(tree_hash(leaves, begin + split, end));
  } else {
    path = audit_path(leaves, m - split, begin + split, end);
    path.push_back(tree_hash(leaves, begin, begin + split));
  }
  return path;
}

struct KeyPair {
  std::unique_ptr<EVP_PKEY, OpensslFree<EVP_PKEY_free>> key;
  explicit KeyPair(const char* type) : key(EVP_PKEY_Q_keygen(nullptr, nullptr, type, "P-256")) {}
  KeyPair() : key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519")) {}
  Bytes sign(std::string_view message) const {
    std::unique_ptr<EVP_MD_CTX, OpensslFree<EVP_MD_CTX_free>> context(EVP_MD_CTX_new());
    bool ed = EVP_PKEY_get_base_id(key.get()) == EVP_PKEY_ED25519;
    REQUIRE(EVP_DigestSignInit(context.get(), nullptr, ed ? nullptr : EVP_sha256(), nullptr,
                               key.get()) == 1);
    std::size_t size = 0;
    auto* data = reinterpret_cast<const unsigned char*>(message.data());
    REQUIRE(EVP_DigestSign(context.get(), nullptr, &size, data, message.size()) == 1);
    Bytes signature(size, '\0');
    REQUIRE(EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                           data, message.size()) == 1);
    signature.resize(size);
    return signature;
  }
  SharedKey public_key() const { return shared(public_key_from_der(public_key_der(key.get()))); }
  std::string pem() const {
    return "-----BEGIN PUBLIC KEY-----\n" + base64_encode(public_key_der(key.get())) +
           "\n-----END PUBLIC KEY-----\n";
  }
};

TEST_CASE("sigstore: inclusion proofs of every leaf of trees of 1 to 9 leaves") {
  for (std::size_t size = 1; size <= 9; ++size) {
    std::vector<Bytes> leaves;
    for (std::size_t i = 0; i < size; ++i) leaves.push_back("leaf " + std::to_string(i));
    Bytes root = tree_hash(leaves, 0, size);
    for (std::size_t m = 0; m < size; ++m) {
      std::vector<Bytes> path = audit_path(leaves, m, 0, size);
      CHECK(verify_inclusion(m, size, leaf_hash(leaves[m]), path, root));
      CHECK_FALSE(verify_inclusion(m, size, leaf_hash("another"), path, root));
      if (size > 1) CHECK_FALSE(verify_inclusion(m ^ 1, size, leaf_hash(leaves[m]), path, root));
      CHECK_FALSE(verify_inclusion(size, size, leaf_hash(leaves[m]), path, root));
      if (!path.empty()) {
        CHECK_FALSE(
            verify_inclusion(m, size, leaf_hash(leaves[m]), {path.begin(), path.end() - 1}, root));
        path.back()[0] ^= 1;
        CHECK_FALSE(verify_inclusion(m, size, leaf_hash(leaves[m]), path, root));
      }
    }
  }
}

TEST_CASE(
    "sigstore: a checkpoint is signed by its log under the origin name, other lines ignored") {
  KeyPair log_key;
  LogKey log{"https://log.example", sha256("the log's id"), log_key.public_key(), {}};
  Bytes root = sha256("root");
  std::string text = "log.example\n42\n" + base64_encode(root) + "\n";
  auto line = [&](const std::string& name, const Bytes& hint, const Bytes& signature) {
    return "\xE2\x80\x94 " + name + " " + base64_encode(hint.substr(0, 4) + signature) + "\n";
  };
  std::string by_log = line("log.example", log.log_id, log_key.sign(text));
  std::string witness = line("witness.example", sha256("witness"), KeyPair().sign(text));
  CHECK_NOTHROW(verify_checkpoint(text + "\n" + by_log, log, 42, root));
  CHECK_NOTHROW(verify_checkpoint(text + "\n" + witness + by_log, log, 42, root));
  CHECK_THROWS_WITH_AS(verify_checkpoint(text + "\n" + witness, log, 42, root),
                       "checkpoint: not signed by the log", Error);
  CHECK_THROWS_WITH_AS(
      verify_checkpoint(text + "\n" + line("other.example", log.log_id, log_key.sign(text)), log,
                        42, root),
      "checkpoint: not signed by the log", Error);
  CHECK_THROWS_WITH_AS(
      verify_checkpoint(text + "\n" + line("log.example", log.log_id, KeyPair().sign(text)), log,
                        42, root),
      "checkpoint: the log's signature does not verify", Error);
  CHECK_THROWS_WITH_AS(verify_checkpoint(text + "\n" + by_log, log, 43, root),
                       "checkpoint: its tree size is not the proof's", Error);
  CHECK_THROWS_WITH_AS(verify_checkpoint(text + "\n" + by_log, log, 42, sha256("other")),
                       "checkpoint: its root hash is not the proof's", Error);
  CHECK_THROWS_AS(verify_checkpoint("42\n" + base64_encode(root) + "\n\n" + by_log, log, 42, root),
                  Error);
}

TEST_CASE("sigstore: the earliest time proven, and who proves it") {
  using Source = ProvenTime::Source;
  CHECK_FALSE(earliest({}));
  auto first = earliest({{300, Source::transparency_log}, {200, Source::timestamp_authority}});
  REQUIRE(first);
  CHECK(first->seconds == 200);
  CHECK(first->source == Source::timestamp_authority);
  // The same second from both: the log's.
  auto tie = earliest({{200, Source::timestamp_authority}, {200, Source::transparency_log}});
  REQUIRE(tie);
  CHECK(tie->source == Source::transparency_log);
}

TEST_CASE("sigstore: the built-in trusted root, and a key trusted from no time refused") {
  const TrustedRoot& root = public_good_trusted_root();
  CHECK_FALSE(root.transparency_logs.empty());
  CHECK_FALSE(root.ct_logs.empty());
  CHECK_FALSE(root.certificate_authorities.empty());
  CHECK_FALSE(root.timestamp_authorities.empty());
  KeyPair key("EC");
  std::string tlog =
      R"({"baseUrl": "https://log.example", "logId": {"keyId": "AAAA"}, "publicKey": {"rawBytes": ")" +
      base64_encode(public_key_der(key.key.get())) + R"(", "validFor": {VALID}}})";
  auto document = [&](const std::string& valid) {
    std::string entry = tlog;
    entry.replace(entry.find("VALID"), 5, valid);
    return R"({"mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1", "tlogs": [)" +
           entry + "]}";
  };
  TrustedRoot parsed = parse_trusted_root(
      document(R"("start": "2024-01-01T00:00:00.5Z", "end": null)"), "root.json");
  REQUIRE(parsed.transparency_logs.size() == 1);
  CHECK(parsed.transparency_logs[0].valid.start == 1704067200);
  CHECK_FALSE(parsed.transparency_logs[0].valid.end);
  CHECK_THROWS_WITH_AS(
      parse_trusted_root(document(R"("end": "2024-01-01T00:00:00Z")"), "root.json"),
      "root.json: tlogs[0].publicKey.validFor.start: missing", Error);
}

Bytes message_bundle(const std::string& media_type, const Bytes& signature,
                     const std::string& extra = "") {
  return R"({"mediaType": ")" + media_type +
         R"(", "verificationMaterial": {"publicKey": {"hint": "x"})" + extra +
         R"(}, "messageSignature": {"signature": ")" + base64_encode(signature) + R"("}})";
}

TEST_CASE(
    "sigstore: a bundle of an unknown version, a negative log index, bad base64 are refused") {
  const std::string v3 = "application/vnd.dev.sigstore.bundle.v0.3+json";
  CHECK(parse_bundle(message_bundle(v3, "sig"), "b").minor_version == 3);
  CHECK(parse_bundle(message_bundle("application/vnd.dev.sigstore.bundle+json;version=0.1", "sig"),
                     "b")
            .minor_version == 1);
  CHECK_THROWS_WITH_AS(
      parse_bundle(message_bundle("application/vnd.dev.sigstore.bundle.v0.4+json", "s"), "b"),
      doctest::Contains("b: mediaType: not a bundle version"), Error);
  CHECK_THROWS_WITH_AS(
      parse_bundle(message_bundle(v3, "s", R"(, "tlogEntries": [{"logIndex": "-1"}])"), "b"),
      "b: verificationMaterial.tlogEntries[0].logIndex: negative", Error);
  std::string bad = message_bundle(v3, "sig");
  bad.replace(bad.find(base64_encode("sig")), 4, "c2!n");
  CHECK_THROWS_WITH_AS(parse_bundle(bad, "b"), "b: messageSignature.signature: not base64", Error);
  CHECK_THROWS_WITH_AS(parse_bundle("{\"mediaType\": ", "b"), doctest::Contains("b: "), Error);
}

TEST_CASE(
    "sigstore: a key's message signature, over the file or its digest, and a DSSE statement "
    "subject") {
  KeyPair key("EC");
  const std::string v3 = "application/vnd.dev.sigstore.bundle.v0.3+json";
  Bundle bundle = parse_bundle(message_bundle(v3, key.sign("artifact")), "b");
  Policy policy;
  policy.public_key_pem = key.pem();
  const TrustedRoot& root = public_good_trusted_root();
  CHECK_NOTHROW(verify_bundle(bundle, Artifact::of_bytes("artifact"), policy, root, 0));
  CHECK_NOTHROW(verify_bundle(bundle, Artifact::of_digest(sha256("artifact")), policy, root, 0));
  CHECK_THROWS_WITH_AS(verify_bundle(bundle, Artifact::of_bytes("another"), policy, root, 0),
                       "signature: does not verify over the artifact", Error);
  policy.public_key_pem = KeyPair("EC").pem();
  CHECK_THROWS_AS(verify_bundle(bundle, Artifact::of_bytes("artifact"), policy, root, 0), Error);
  Policy keyless{Expected{"me"}, Expected{"issuer"}, std::nullopt};
  CHECK_THROWS_WITH_AS(verify_bundle(bundle, Artifact::of_bytes("artifact"), keyless, root, 0),
                       "the bundle is signed by a key: verify it with --key", Error);

  policy.public_key_pem = key.pem();
  std::string statement =
      R"({"_type": "https://in-toto.io/Statement/v1", "subject": [{"name": "a", "digest": {"sha256": ")" +
      hex(sha256("artifact")) + R"("}}]})";
  std::string type = "application/vnd.in-toto+json";
  Bytes signature = key.sign(dsse_pae(type, statement));
  Bundle dsse = parse_bundle(
      R"({"mediaType": ")" + v3 +
          R"(", "verificationMaterial": {"publicKey": {}}, "dsseEnvelope": {"payload": ")" +
          base64_encode(statement) + R"(", "payloadType": ")" + type +
          R"(", "signatures": [{"sig": ")" + base64_encode(signature) + R"("}]}})",
      "b");
  CHECK_NOTHROW(verify_bundle(dsse, Artifact::of_digest(sha256("artifact")), policy, root, 0));
  CHECK_THROWS_WITH_AS(verify_bundle(dsse, Artifact::of_bytes("another"), policy, root, 0),
                       doctest::Contains("the in-toto statement has no subject of digest"), Error);
}

// A certificate for `key` issued by another (a throwaway CA's), valid an hour.
Bytes certificate_for(const KeyPair& key) {
  KeyPair ca("EC");
  Certificate certificate(X509_new());
  REQUIRE(certificate);
  X509_set_version(certificate.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(certificate.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(certificate.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(certificate.get()), 3600);
  auto name = [](X509_NAME* name, const char* cn) {
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                               -1, -1, 0);
  };
  name(X509_get_subject_name(certificate.get()), "signer");
  name(X509_get_issuer_name(certificate.get()), "ca");
  REQUIRE(X509_set_pubkey(certificate.get(), key.key.get()) == 1);
  REQUIRE(X509_sign(certificate.get(), ca.key.get(), EVP_sha256()) > 0);
  return certificate_der(certificate.get());
}

TEST_CASE(
    "sigstore: a keyless bundle without a log entry: refused where the trusted root names a "
    "transparency log, left to the timestamp authorities where it names none") {
  KeyPair key("EC");
  Bundle bundle;
  bundle.minor_version = 3;
  bundle.certificates.push_back(certificate_for(key));
  bundle.message_signature =
      MessageSignature{HashAlgorithm::sha256, sha256("artifact"), key.sign("artifact")};
  Policy keyless{Expected{"me"}, Expected{"issuer"}, std::nullopt};
  CHECK_THROWS_WITH_AS(
      verify_bundle(bundle, Artifact::of_bytes("artifact"), keyless, public_good_trusted_root(), 0),
      "the bundle has no transparency log entry", Error);
  // A private Sigstore without Rekor: the time must then come from a
  // timestamp, and this bundle has none.
  TrustedRoot without_logs;
  CHECK_THROWS_WITH_AS(
      verify_bundle(bundle, Artifact::of_bytes("artifact"), keyless, without_logs, 0),
      doctest::Contains("nothing proves when it was signed"), Error);
}

}  // namespace
}  // namespace fluxop::sigstore
