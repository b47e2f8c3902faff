#include "core/reconcile/artifacts.h"

#include "core/distribution/locate.h"
#include "core/error.h"
#include "core/net/trust.h"
#include "core/oci/credentials.h"
#include "core/oci/reference.h"
#include "core/signatures/image_signatures.h"

namespace fluxop::reconcile {

oci::RegistryOptions registry_options(const RegistrySettings& settings,
                                      const RegistryCredentials& credentials) {
  oci::RegistryOptions options;
  options.insecure_registries = settings.insecure_registries;
  options.credentials = credentials ? credentials : oci::default_docker_credentials();
  options.http.request_timeout = settings.request_timeout;
  options.http.host_trust = net::registry_trust(settings.ca_pem, settings.certs_dir);
  std::string certs_dir =
      "a certificates directory (--certs-dir, " + std::string(net::kCertsDirEnvironment) + ")";
  options.http.untrusted_hint =
      "add its CA with --ca-file, or as HOST[:PORT]/ca.crt in " + certs_dir;
  options.http.client_certificate_hint =
      "put it as HOST[:PORT]/client.cert with its client.key in " + certs_dir;
  return options;
}

RegistryArtifacts::RegistryArtifacts(RegistrySettings settings, std::string cache_root,
                                     std::function<void(const std::string&)> notice)
    : settings_(std::move(settings)),
      cache_root_(std::move(cache_root)),
      notice_(std::move(notice)) {}

namespace {

// The digest `ref` names, once its signature verified as `verify` says;
// throws fluxop::Error saying what failed.
std::string verified_digest(const ArtifactVerification& verify, const oci::Reference& ref,
                            const oci::RegistryOptions& options) {
  sigstore::Policy policy;
  if (!verify.key_pem.empty()) {
    policy.public_key_pem = verify.key_pem;
  } else {
    policy = signatures::github_actions_signer(verify.identity_regexp.empty()
                                                   ? signatures::kControlPlaneIdentity
                                                   : std::string_view(verify.identity_regexp));
    if (!verify.issuer.empty()) policy.issuer = sigstore::Expected{verify.issuer, false};
  }
  std::optional<sigstore::TrustedRoot> custom;
  if (!verify.trusted_root.empty())
    custom = sigstore::parse_trusted_root(verify.trusted_root, verify.trusted_root_name);
  oci::RegistryClient client(options);
  return signatures::verify_signature(client, ref, policy,
                                      custom ? *custom : sigstore::public_good_trusted_root(),
                                      std::time(nullptr))
      .digest;
}

}  // namespace

oci::ArtifactCache RegistryArtifacts::cache() const {
  if (cache_root_.empty())
    throw Error("no cache directory for oci:// artifacts: set HOME or XDG_CACHE_HOME");
  return oci::ArtifactCache(cache_root_);
}

oci::PullResult RegistryArtifacts::pull_artifact(std::string_view url, std::string_view origin,
                                                 const RegistryCredentials& credentials) {
  try {
    oci::ArtifactCache artifacts = cache();
    oci::PullOptions options;
    options.registry = registry_options(settings_, credentials);
    options.offline = settings_.offline;
    options.waiting = notice_;
    oci::Reference ref = oci::Reference::parse(url);
    if (settings_.verify.enabled) {
      // Verified first, then pulled by the digest verified: nothing is
      // written that was not verified.
      if (settings_.offline)
        throw Error(
            "--verify: a signature is verified in the registry, which --offline does not reach");
      ref.digest = verified_digest(settings_.verify, ref, options.registry);
      if (notice_) notice_("verified the signature of " + ref.pinned(ref.digest));
    }
    oci::PullResult result = oci::pull(artifacts, ref, options);
    if (notice_ && !result.warning.empty()) notice_("warning: " + result.warning);
    if (notice_ && result.downloaded)
      notice_("pulled " + result.ref.pinned(result.artifact.digest));
    return result;
  } catch (const Error& e) {
    if (origin.empty()) throw;
    throw Error(std::string(origin) + ": " + e.what());
  }
}

PulledDistribution RegistryArtifacts::pull(std::string_view url, std::string_view origin,
                                           const RegistryCredentials& credentials) {
  oci::PullResult pulled = pull_artifact(url, origin, credentials);
  return {oci::pulled_distribution(pulled), pulled.artifact.digest};
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
