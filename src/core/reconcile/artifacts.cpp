#include "core/reconcile/artifacts.h"

#include "core/digest.h"
#include "core/distribution/locate.h"
#include "core/error.h"
#include "core/file.h"
#include "core/oci/credentials.h"
#include "core/oci/reference.h"
#include "core/signatures/image_signatures.h"

namespace fluxop::reconcile {

RegistryArtifacts::RegistryArtifacts(RegistrySettings settings, std::string cache_root,
                                     std::function<void(const std::string&)> notice)
    : settings_(std::move(settings)),
      cache_root_(std::move(cache_root)),
      notice_(std::move(notice)) {}

namespace {

// A signature verified is remembered in the artifact cache by what it
// proved: its statement, sealed under the user's key (core/cache_seal.h),
// in verified/<sha256 of the statement>. Whoever can write the cache cannot
// seal: a planted or altered record does not open, and the signature is
// verified in the registry again (or, offline, refused).
std::string verified_record(const oci::ArtifactCache& cache, const std::string& statement) {
  return cache.root() + "/verified/" + sha256_digest(statement).substr(7);
}

bool verified_before(const oci::ArtifactCache& cache, const std::string& statement) {
  std::optional<std::string> seal = read_kept_file(verified_record(cache, statement), 128);
  return seal && cache.seal().opens(statement, *seal);
}

}  // namespace

void RegistryArtifacts::say(const std::string& line) const {
  std::lock_guard<std::mutex> held(notice_mutex_);
  if (notice_) notice_(line);
}

oci::ArtifactCache RegistryArtifacts::cache() const {
  if (cache_root_.empty())
    throw Error("no cache directory for oci:// artifacts: set HOME or XDG_CACHE_HOME");
  return oci::ArtifactCache(cache_root_);
}

sigstore::Policy verification_policy(const ArtifactVerification& verify,
                                     std::string_view default_identity) {
  sigstore::Policy policy;
  if (!verify.key_pem.empty()) {
    policy.public_key_pem = verify.key_pem;
    return policy;
  }
  policy = signatures::github_actions_signer(
      verify.identity_regexp.empty() ? default_identity : std::string_view(verify.identity_regexp));
  if (!verify.issuer.empty()) policy.issuer = sigstore::Expected{verify.issuer, false};
  return policy;
}

std::string verified_statement(const ArtifactVerification& verify, const sigstore::Policy& policy,
                               const oci::Reference& ref, const std::string& digest) {
  // Each expectation with its kind: a value and a regexp that read the same
  // are different policies.
  auto expected = [](const std::optional<sigstore::Expected>& value) {
    if (!value) return std::string("none");
    return (value->regexp ? "regexp " : "value ") + value->value;
  };
  return "fluxopctl verified signature 2\n" + ref.registry + "/" + ref.repository + "@" + digest +
         "\nidentity " + expected(policy.identity) + "\nissuer " + expected(policy.issuer) +
         "\nkey " + (policy.public_key_pem ? sha256_digest(*policy.public_key_pem) : "none") +
         "\ntrusted root " + sha256_digest(verify.trusted_root) + "\n";
}

std::string RegistryArtifacts::verified_digest(const oci::ArtifactCache& cache,
                                               const oci::Reference& ref,
                                               const oci::RegistryOptions& options,
                                               std::string_view default_identity) const {
  const ArtifactVerification& verify = settings_.verify;
  std::string digest = ref.digest;
  std::optional<oci::RegistryClient> client;
  if (digest.empty() && settings_.offline) {
    if (std::optional<oci::RefRecord> record = cache.resolve(ref)) digest = record->digest;
  } else if (digest.empty()) {
    client.emplace(options);
    std::optional<oci::Manifest> named = client->find_document(ref);
    if (!named) throw Error(ref.str() + ": not found");
    digest = named->digest;
  }
  sigstore::Policy policy = verification_policy(verify, default_identity);
  std::string statement = verified_statement(verify, policy, ref, digest);
  if (!digest.empty() && verified_before(cache, statement)) return digest;
  if (settings_.offline)
    throw Error("--verify: " + ref.str() +
                ": its signature was not verified online before, and --offline does not reach "
                "the registry");
  if (!client) client.emplace(options);
  oci::Reference pinned = ref;
  pinned.digest = digest;
  std::optional<sigstore::TrustedRoot> custom;
  if (!verify.trusted_root.empty())
    custom = sigstore::parse_trusted_root(verify.trusted_root, verify.trusted_root_name);
  signatures::verify_signature(*client, pinned, policy,
                               custom ? *custom : sigstore::public_good_trusted_root(),
                               std::time(nullptr));
  say("verified the signature of " + pinned.pinned(digest));
  if (cache.seal().has_key())
    write_file_atomically(verified_record(cache, statement), cache.seal().seal(statement), 0644);
  return digest;
}

oci::PullResult RegistryArtifacts::pull_artifact(
    std::string_view url, std::string_view origin, const RegistryCredentials& credentials,
    std::function<void(const oci::PullResult&)> meanwhile) {
  try {
    oci::ArtifactCache artifacts = cache();
    oci::PullOptions options;
    options.registry = oci::registry_options(settings_, credentials);
    options.offline = settings_.offline;
    options.waiting = notice_;
    options.meanwhile = std::move(meanwhile);
    oci::Reference ref = oci::Reference::parse(url);
    oci::Reference named = ref;
    if (settings_.verify.enabled) {
      // Verified first (or verified before, by the sealed record), then
      // pulled by the digest verified alone: nothing unverified is written.
      ref = {
          named.registry, named.repository, "",
          verified_digest(artifacts, named, options.registry, signatures::kControlPlaneIdentity)};
    }
    oci::PullResult result = oci::pull(artifacts, ref, options);
    // The tag resolved online, for --offline, as a pull by the tag records it.
    if (ref.tag != named.tag && named.digest.empty() && !settings_.offline)
      artifacts.record(named, ref.digest);
    if (notice_ && !result.warning.empty()) notice_("warning: " + result.warning);
    if (notice_ && result.downloaded)
      notice_("pulled " + result.ref.pinned(result.artifact.digest));
    return result;
  } catch (const Error& e) {
    if (origin.empty()) throw;
    throw Error(std::string(origin) + ": " + e.what());
  }
}

std::optional<std::string> RegistryArtifacts::verify_image(const oci::Reference& image,
                                                           std::string_view default_identity) {
  if (!settings_.verify.enabled) return std::nullopt;
  return verified_digest(cache(), image, oci::registry_options(settings_, {}), default_identity);
}

PulledDistribution RegistryArtifacts::pull(
    std::string_view url, std::string_view origin, const RegistryCredentials& credentials,
    const std::function<void(const PulledDistribution&)>& meanwhile) {
  std::function<void(const oci::PullResult&)> likely;
  if (meanwhile) {
    likely = [&meanwhile](const oci::PullResult& result) {
      meanwhile({oci::pulled_distribution(result), result.artifact.digest});
    };
  }
  oci::PullResult pulled = pull_artifact(url, origin, credentials, std::move(likely));
  return {oci::pulled_distribution(pulled), pulled.artifact.digest,
          [this, digest = pulled.artifact.digest] {
            try {
              return !cache().find(digest);
            } catch (const Error&) {
              return false;  // not readable: not known to be gone
            }
          }};
}

std::optional<PulledDistribution> RegistryArtifacts::pulled_default() {
  if (cache_root_.empty()) return std::nullopt;
  if (settings_.verify.enabled)
    throw Error(
        "--verify: the default artifact as last pulled is in the cache, not verified: give "
        "--distribution-artifact " +
        std::string(distribution::kDefaultArtifact));
  oci::ArtifactCache artifacts(cache_root_);
  oci::Reference ref = oci::Reference::parse(distribution::kDefaultArtifact);
  if (!artifacts.resolve(ref)) return std::nullopt;
  oci::PullOptions options;
  options.offline = true;
  try {
    oci::PullResult pulled = oci::pull(artifacts, ref, options);
    return PulledDistribution{oci::pulled_distribution(pulled), pulled.artifact.digest};
  } catch (const Error& e) {
    throw Error(ref.str() + " (as last pulled): " + e.what());
  }
}

}  // namespace fluxop::reconcile
