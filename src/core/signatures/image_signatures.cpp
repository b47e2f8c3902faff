#include "core/signatures/image_signatures.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "core/base64.h"
#include "core/error.h"
#include "core/oci/referrers.h"
#include "core/peer_json.h"

namespace fluxop::signatures {

namespace {

using nlohmann::json;

constexpr std::string_view kSimpleSigning = "application/vnd.dev.cosign.simplesigning.v1+json";
constexpr std::string_view kBundleMediaTypes = "application/vnd.dev.sigstore.bundle";
constexpr std::string_view kEmptyConfig = "application/vnd.oci.empty.v1+json";
constexpr std::string_view kSignatureAnnotation = "dev.cosignproject.cosign/signature";
constexpr std::string_view kCertificateAnnotation = "dev.sigstore.cosign/certificate";
constexpr std::string_view kRekorAnnotation = "dev.sigstore.cosign/bundle";
constexpr std::string_view kTimestampAnnotation = "dev.sigstore.cosign/rfc3161timestamp";
// What cosign writes on a bundle referrer's manifest, and in the in-toto
// statement of the DSSE envelope it signs: a signature of the image (cosign
// v3's `sign`) has this predicate type; any other is an attestation.
constexpr std::string_view kPredicateTypeAnnotation = "dev.sigstore.bundle.predicateType";
constexpr std::string_view kSigningPredicateType = "https://sigstore.dev/cosign/sign/v1";

// A payload or bundle is a few KB; a signature manifest holds a few. Far
// above both, so that a hostile registry cannot make us fetch or try more;
// a refusal says how many were left untried.
constexpr std::uint64_t kMaxSignatureBlobBytes = 1 << 20;
constexpr std::size_t kMaxSignaturesTried = 32;
constexpr std::size_t kAttestedTypesShown = 3;

bool is_bundle_type(std::string_view media_type) {
  return media_type.rfind(kBundleMediaTypes, 0) == 0;
}

// A referrer that may be a Sigstore bundle: its artifact type says so, or is
// the empty config's, which a registry listing a manifest's config media type
// in place of its artifactType (go-containerregistry's) shows for cosign's
// bundles; the manifest's layers then tell.
bool may_be_bundle(const oci::Descriptor& referrer) {
  return is_bundle_type(referrer.artifact_type) || referrer.artifact_type == kEmptyConfig;
}

const std::string* annotation(const oci::Descriptor& layer, std::string_view key) {
  auto it = layer.annotations.find(std::string(key));
  return it == layer.annotations.end() ? nullptr : &it->second;
}

// A member of a JSON object of a peer; nullptr when absent or not an object.
const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

bool is_string(const json* value) { return value != nullptr && value->is_string(); }
bool is_integer(const json* value) { return value != nullptr && value->is_number_integer(); }

sigstore::Bytes decoded(const std::string& text, std::string_view what) {
  auto bytes = base64_decode(text);
  if (!bytes) throw Error(std::string(what) + ": not base64");
  return *bytes;
}

// cosign's bundle annotation: {"SignedEntryTimestamp": base64,
// "Payload": {"body": base64, "integratedTime", "logIndex", "logID": hex}}.
sigstore::TransparencyLogEntry rekor_entry(const std::string& text) {
  std::string what(kRekorAnnotation);
  json document = parse_peer_json(text);
  const json* timestamp = member(document, "SignedEntryTimestamp");
  const json* payload = member(document, "Payload");
  if (!is_string(timestamp) || payload == nullptr || !payload->is_object())
    throw Error(what + ": not a Rekor bundle (SignedEntryTimestamp, Payload)");
  const json* body = member(*payload, "body");
  const json* time = member(*payload, "integratedTime");
  const json* index = member(*payload, "logIndex");
  const json* log_id = member(*payload, "logID");
  if (!is_string(body) || !is_integer(time) || !is_integer(index) || !is_string(log_id))
    throw Error(what + ": Payload: needs body, integratedTime, logIndex and logID");
  sigstore::TransparencyLogEntry entry;
  entry.body = decoded(*body, what + ": Payload.body");
  entry.integrated_time = *time;
  entry.log_index = *index;
  auto id = sigstore::unhex(log_id->get<std::string>());
  if (!id) throw Error(what + ": Payload.logID: not hex");
  entry.log_id = *id;
  entry.signed_entry_timestamp = decoded(*timestamp, what + ": SignedEntryTimestamp");
  // What the log says it logged; the log's signature covers the body.
  json logged = parse_peer_json(entry.body);
  const json* kind = member(logged, "kind");
  const json* version = member(logged, "apiVersion");
  if (!is_string(kind) || !is_string(version))
    throw Error(what + ": Payload.body: not a Rekor entry (kind, apiVersion)");
  entry.kind = *kind;
  entry.version = *version;
  return entry;
}

// The predicate type a bundle referrer's manifest says its statement has;
// nullopt when it says none. Unsigned: it only spares fetching what says it
// is an attestation, and the statement itself decides for the rest.
std::optional<std::string> annotated_predicate_type(const oci::Descriptor& referrer) {
  const std::string* type = annotation(referrer, kPredicateTypeAnnotation);
  return type ? std::optional<std::string>(*type) : std::nullopt;
}

// Throws fluxop::Error unless a bundle's DSSE envelope, if it has one, is a
// signature of the image: an in-toto statement of cosign's signing
// predicate. An attestation (SLSA provenance, an SBOM) says something else
// about the image, and a build system attests builds nobody released.
void check_signing_statement(const sigstore::Bundle& bundle) {
  if (!bundle.dsse_envelope) return;
  json statement = parse_peer_json(bundle.dsse_envelope->payload);
  const json* type = member(statement, "predicateType");
  std::string found = is_string(type) ? type->get<std::string>() : "";
  if (found != kSigningPredicateType)
    throw Error("an attestation (predicate type " + quote(found, 80) + "), not a signature");
}

class SignatureSearch {
 public:
  SignatureSearch(oci::RegistryClient& client, const oci::Reference& ref, std::string digest,
                  const sigstore::Policy& policy, const sigstore::TrustedRoot& root,
                  std::int64_t now)
      : client_(client),
        ref_(ref),
        digest_(std::move(digest)),
        policy_(policy),
        root_(root),
        now_(now) {}

  std::optional<VerifiedSignature> legacy() {
    oci::Reference tag{ref_.registry, ref_.repository, signature_tag(digest_), ""};
    std::optional<oci::Manifest> manifest = client_.find_document(tag);
    if (!manifest) return std::nullopt;
    for (std::size_t i = 0; i < manifest->layers.size(); ++i) {
      const oci::Descriptor& layer = manifest->layers[i];
      if (layer.media_type != kSimpleSigning || !may_try()) continue;
      std::string where = tag.tag + " layers[" + std::to_string(i) + "]";
      try {
        std::string payload = client_.fetch_blob_bytes(tag, layer, kMaxSignatureBlobBytes);
        sigstore::Bundle bundle = legacy_signature_bundle(layer, payload);
        sigstore::Verification verified = sigstore::verify_bundle(
            bundle, sigstore::Artifact::of_bytes(payload), policy_, root_, now_);
        check_simple_signing_payload(payload, digest_);
        return result(verified, where);
      } catch (const Error& e) {
        failures_.push_back(where + ": " + e.what());
      }
    }
    return std::nullopt;
  }

  std::optional<VerifiedSignature> referrers() {
    std::optional<std::vector<oci::Descriptor>> found = client_.fetch_referrers(ref_, digest_);
    if (!found) {
      oci::Reference tag{ref_.registry, ref_.repository, oci::referrers_tag(digest_), ""};
      if (std::optional<oci::Manifest> index = client_.find_document(tag)) found = index->manifests;
    }
    if (!found) return std::nullopt;
    sigstore::Bytes image_digest = *sigstore::unhex(std::string_view(digest_).substr(7));
    for (const oci::Descriptor& referrer : *found) {
      if (!may_be_bundle(referrer)) continue;
      std::string where = "referrer " + referrer.digest;
      if (std::optional<std::string> type = annotated_predicate_type(referrer);
          type && *type != kSigningPredicateType) {
        ++attestations_;
        if (attested_types_.size() < kAttestedTypesShown) attested_types_.insert(*type);
        continue;
      }
      if (!may_try()) continue;
      try {
        oci::Manifest manifest = client_.fetch_document(ref_, referrer.digest);
        auto layer =
            std::find_if(manifest.layers.begin(), manifest.layers.end(),
                         [](const oci::Descriptor& d) { return is_bundle_type(d.media_type); });
        if (layer == manifest.layers.end()) {
          // Another artifact of an empty config (an SBOM, an attestation).
          if (!is_bundle_type(referrer.artifact_type)) continue;
          throw Error("no Sigstore bundle layer");
        }
        std::string text = client_.fetch_blob_bytes(ref_, *layer, kMaxSignatureBlobBytes);
        sigstore::Bundle bundle = sigstore::parse_bundle(text, "bundle");
        check_signing_statement(bundle);
        sigstore::Verification verified = sigstore::verify_bundle(
            bundle, sigstore::Artifact::of_digest(image_digest), policy_, root_, now_);
        return result(verified, where);
      } catch (const Error& e) {
        failures_.push_back(where + ": " + e.what());
      }
    }
    return std::nullopt;
  }

  [[noreturn]] void fail() const {
    std::string pinned = ref_.pinned(digest_);
    if (failures_.empty() && attestations_ == 0 && untried_ == 0)
      throw Error(pinned + ": not signed: no " + signature_tag(digest_) +
                  " tag, no Sigstore bundle among its referrers");
    std::string message = pinned + ": no signature verifies: ";
    std::vector<std::string> said = failures_;
    if (attestations_ > 0) {
      std::string types;
      for (const std::string& type : attested_types_)
        types += (types.empty() ? "" : ", ") + quote(type, 80);
      said.push_back("referrers: " + std::to_string(attestations_) + " attestation" +
                     (attestations_ > 1 ? "s" : "") + " (predicate type " + types + "), not " +
                     (attestations_ > 1 ? "signatures" : "a signature"));
    }
    if (untried_ > 0)
      said.push_back(std::to_string(untried_) + " more signature" + (untried_ > 1 ? "s" : "") +
                     " not tried (at most " + std::to_string(kMaxSignaturesTried) +
                     " are tried per reference)");
    for (std::size_t i = 0; i < said.size(); ++i) message += (i > 0 ? "; " : "") + said[i];
    throw Error(message);
  }

 private:
  // Whether one more signature may be fetched and checked; counts those
  // that may not, for the refusal to say.
  bool may_try() {
    if (tried_ < kMaxSignaturesTried) {
      ++tried_;
      return true;
    }
    ++untried_;
    return false;
  }

  VerifiedSignature result(const sigstore::Verification& verified, std::string where) const {
    return {ref_.pinned(digest_),
            digest_,
            verified.identity,
            verified.issuer,
            sigstore::earliest(verified.times),
            std::move(where)};
  }

  oci::RegistryClient& client_;
  const oci::Reference& ref_;
  std::string digest_;
  const sigstore::Policy& policy_;
  const sigstore::TrustedRoot& root_;
  std::int64_t now_;
  std::size_t tried_ = 0;
  std::size_t untried_ = 0;
  std::size_t attestations_ = 0;
  std::set<std::string> attested_types_;  // the first few, to name
  std::vector<std::string> failures_;
};

}  // namespace

std::string_view default_identity(std::string_view source) {
  for (std::string_view upstream : {"ghcr.io/fluxcd/", "docker.io/fluxcd/"})
    if (source.rfind(upstream, 0) == 0) return kFluxIdentity;
  return kControlPlaneIdentity;
}

sigstore::Policy github_actions_signer(std::string_view identity_regexp) {
  sigstore::Policy policy;
  policy.identity = sigstore::Expected{std::string(identity_regexp), true};
  policy.issuer = sigstore::Expected{std::string(kGitHubActionsIssuer), false};
  return policy;
}

std::string signature_tag(std::string_view digest) { return oci::referrers_tag(digest) + ".sig"; }

sigstore::Bundle legacy_signature_bundle(const oci::Descriptor& layer, const std::string& payload) {
  sigstore::Bundle bundle;
  bundle.minor_version = 1;  // a signed entry timestamp, no inclusion proof
  const std::string* signature = annotation(layer, kSignatureAnnotation);
  if (signature == nullptr)
    throw Error(std::string(kSignatureAnnotation) + ": missing (not a cosign signature)");
  bundle.message_signature =
      sigstore::MessageSignature{sigstore::HashAlgorithm::sha256, sigstore::sha256(payload),
                                 decoded(*signature, kSignatureAnnotation)};
  if (const std::string* pem = annotation(layer, kCertificateAnnotation); pem && !pem->empty()) {
    sigstore::Certificate certificate = sigstore::certificate_from_pem(*pem);
    if (!certificate) throw Error(std::string(kCertificateAnnotation) + ": not a PEM certificate");
    // Only the signer's: the trusted root names the CA chain it must reach.
    bundle.certificates.push_back(sigstore::certificate_der(certificate.get()));
  } else {
    bundle.public_key = true;
  }
  if (const std::string* rekor = annotation(layer, kRekorAnnotation))
    bundle.tlog_entries.push_back(rekor_entry(*rekor));
  if (const std::string* timestamp = annotation(layer, kTimestampAnnotation)) {
    json document = parse_peer_json(*timestamp);
    const json* signed_timestamp = member(document, "SignedRFC3161Timestamp");
    if (!is_string(signed_timestamp))
      throw Error(std::string(kTimestampAnnotation) + ": no SignedRFC3161Timestamp");
    bundle.timestamps.push_back(decoded(*signed_timestamp, kTimestampAnnotation));
  }
  return bundle;
}

void check_simple_signing_payload(std::string_view payload, const std::string& digest) {
  json document = parse_peer_json(payload);
  const json* critical = member(document, "critical");
  const json* type = critical ? member(*critical, "type") : nullptr;
  if (!is_string(type) || *type != "cosign container image signature")
    throw Error("payload: not a cosign container image signature");
  const json* image = member(*critical, "image");
  const json* signed_digest = image ? member(*image, "docker-manifest-digest") : nullptr;
  if (!is_string(signed_digest))
    throw Error("payload: critical.image.docker-manifest-digest: missing");
  if (*signed_digest != digest)
    throw Error("digest: the signature is of " + quote(signed_digest->get<std::string>(), 80) +
                ", not of " + digest);
}

std::vector<oci::MirrorCopy> signature_copies(oci::RegistryClient& client,
                                              const std::vector<oci::MirrorCopy>& copies,
                                              bool referrers_tags) {
  std::vector<oci::MirrorCopy> signatures;
  for (const oci::MirrorCopy& copy : copies) {
    std::vector<std::string> tags{signature_tag(copy.source.digest)};
    if (referrers_tags) tags.push_back(oci::referrers_tag(copy.source.digest));
    for (const std::string& tag : tags) {
      oci::Reference source{copy.source.registry, copy.source.repository, tag, ""};
      std::optional<oci::Manifest> found = client.find_document(source);
      if (!found) continue;
      source.digest = found->digest;
      signatures.push_back(
          {source, {copy.destination.registry, copy.destination.repository, tag, ""}});
    }
    // The bundles the source's referrers API lists, by digest: a destination
    // that serves the API lists them again (they name their subject).
    oci::Reference source{copy.source.registry, copy.source.repository, "", ""};
    if (auto referrers = client.fetch_referrers(source, copy.source.digest))
      for (const oci::Descriptor& referrer : *referrers)
        if (may_be_bundle(referrer))
          signatures.push_back(
              {{source.registry, source.repository, "", referrer.digest},
               {copy.destination.registry, copy.destination.repository, "", referrer.digest}});
  }
  return signatures;
}

VerifiedSignature verify_signature(oci::RegistryClient& client, const oci::Reference& ref,
                                   const sigstore::Policy& policy,
                                   const sigstore::TrustedRoot& root, std::int64_t now) {
  std::string digest = ref.digest;
  if (digest.empty()) {
    std::optional<oci::Manifest> named = client.find_document(ref);
    if (!named) throw Error(ref.str() + ": not found");
    digest = named->digest;
  }
  SignatureSearch search(client, ref, digest, policy, root, now);
  if (auto verified = search.legacy()) return *verified;
  if (auto verified = search.referrers()) return *verified;
  search.fail();
}

}  // namespace fluxop::signatures
