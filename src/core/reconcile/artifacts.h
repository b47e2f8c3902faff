// The distribution artifacts a reconciliation reads, behind a port: the
// pipeline asks for an oci:// URL's distribution and for the default one
// as last pulled; RegistryArtifacts answers from fluxopctl's cache and the
// registries, a unit test from memory.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/distribution/distribution.h"
#include "core/oci/cache.h"
#include "core/oci/pull.h"
#include "core/oci/registry.h"
#include "core/oci/registry_access.h"
#include "core/sigstore/verify.h"

namespace fluxop::reconcile {

// A registry's credential; the Docker config's when the function is empty.
using RegistryCredentials = std::function<oci::Credential(std::string_view registry)>;

// A distribution read from an OCI artifact, and the digest of its manifest
// (.status.lastArtifactRevision).
struct PulledDistribution {
  distribution::Distribution distribution;
  std::string digest;
  // Whether the cached entry it is read from is gone since: a read found
  // its layer damaged and removed it (oci::Layer::on_damaged). A render
  // that failed so is run once more, on the artifact pulled again.
  std::function<bool()> removed{};
};

class ArtifactPort {
 public:
  virtual ~ArtifactPort() = default;
  // The distribution `url` names, pulled with `credentials`; errors start
  // with `origin` when it is given. `meanwhile`, when set, may hear while
  // a tag is resolved what the pull will most likely return (the artifact
  // the tag named last, from the cache); it must not throw.
  virtual PulledDistribution pull(
      std::string_view url, std::string_view origin, const RegistryCredentials& credentials,
      const std::function<void(const PulledDistribution&)>& meanwhile) = 0;
  // distribution::kDefaultArtifact as `fluxopctl pull` last fetched it, from the
  // cache alone; nothing when it was never pulled.
  virtual std::optional<PulledDistribution> pulled_default() = 0;
  // --verify: the digest of `image` whose signature is verified (or was, by
  // the record the cache keeps), signed as the flags say, else by
  // `default_identity` through GitHub Actions; nothing without --verify.
  // Throws fluxop::Error saying what failed. Called from several threads at
  // once (the images of an instance are verified together).
  virtual std::optional<std::string> verify_image(const oci::Reference& /*image*/,
                                                  std::string_view /*default_identity*/) {
    return std::nullopt;
  }
  // Whether signatures are verified (--verify).
  virtual bool verifies() const { return false; }
};

// --verify: the artifact's signature, checked in its registry before it is
// pulled (signatures/image_signatures.h).
struct ArtifactVerification {
  bool enabled = false;
  std::string identity_regexp;  // default: signatures::kControlPlaneIdentity
  std::string issuer;           // default: signatures::kGitHubActionsIssuer
  std::string key_pem;          // or a key's signature
  std::string trusted_root;     // trusted_root.json; empty: the public-good instance's
  std::string trusted_root_name;
};

// What --verify checks a signature against: `verify`'s key, or its
// identity and issuer, each defaulting to `default_identity` and the GitHub
// Actions issuer.
sigstore::Policy verification_policy(const ArtifactVerification& verify,
                                     std::string_view default_identity);

// What a verified signature proved, as the cache remembers it (sealed): the
// repository and digest, the policy in effect (the default identity too,
// when the flags name none) and the trusted root. A record made under one
// policy opens for no other.
std::string verified_statement(const ArtifactVerification& verify, const sigstore::Policy& policy,
                               const oci::Reference& ref, const std::string& digest);

// How registries are reached (oci::registry_options), and what a pull
// may do: the flags of every command that pulls.
struct RegistrySettings : oci::RegistryAccess {
  bool offline = false;  // the cache only
  ArtifactVerification verify;
};

// The artifacts of fluxopctl's cache (`cache_root`, empty when there is no
// cache directory) and of the registries.
class RegistryArtifacts final : public ArtifactPort {
 public:
  // `notice` hears what was downloaded, and a pull's warnings.
  RegistryArtifacts(RegistrySettings settings, std::string cache_root,
                    std::function<void(const std::string&)> notice);

  PulledDistribution pull(std::string_view url, std::string_view origin,
                          const RegistryCredentials& credentials,
                          const std::function<void(const PulledDistribution&)>& meanwhile) override;
  std::optional<PulledDistribution> pulled_default() override;
  std::optional<std::string> verify_image(const oci::Reference& image,
                                          std::string_view default_identity) override;
  bool verifies() const override { return settings_.verify.enabled; }

  // The pull itself, for `fluxopctl pull`; `meanwhile` as oci::PullOptions'.
  oci::PullResult pull_artifact(std::string_view url, std::string_view origin,
                                const RegistryCredentials& credentials,
                                std::function<void(const oci::PullResult&)> meanwhile = {});
  // Throws fluxop::Error when there is no cache directory.
  oci::ArtifactCache cache() const;

 private:
  // --verify: the digest `ref` names, its signature verified (signed by
  // `default_identity` unless the flags say; or verified before: a sealed
  // record in `cache`); throws fluxop::Error saying what failed.
  std::string verified_digest(const oci::ArtifactCache& cache, const oci::Reference& ref,
                              const oci::RegistryOptions& options,
                              std::string_view default_identity) const;

  // The notice, one line at a time: images are verified on several threads.
  void say(const std::string& line) const;

  RegistrySettings settings_;
  std::string cache_root_;
  std::function<void(const std::string&)> notice_;
  mutable std::mutex notice_mutex_;
};

}  // namespace fluxop::reconcile
