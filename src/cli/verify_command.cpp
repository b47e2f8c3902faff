#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "core/digest.h"
#include "core/file.h"
#include "core/sigstore/verify.h"

namespace fluxop::cli {

namespace {

// Flags of the Sigstore conformance suite's verify-bundle, and cosign's.
struct VerifyBundleOptions {
  std::string bundle;
  std::string identity;
  std::string identity_regexp;
  std::string issuer;
  std::string issuer_regexp;
  std::string key;
  std::string trusted_root;
  std::string artifact;
};

// "sha256:<64 hex digits>" that is not a file: the artifact's digest.
std::optional<sigstore::Bytes> digest_argument(const std::string& argument) {
  constexpr std::string_view kPrefix = "sha256:";
  if (argument.size() != kPrefix.size() + 64 || argument.rfind(kPrefix, 0) != 0)
    return std::nullopt;
  std::error_code error;
  if (std::filesystem::exists(argument, error)) return std::nullopt;
  sigstore::Bytes digest;
  for (std::size_t i = kPrefix.size(); i < argument.size(); i += 2) {
    auto nibble = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    int high = nibble(argument[i]);
    int low = nibble(argument[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    digest += static_cast<char>(high * 16 + low);
  }
  return digest;
}

std::optional<sigstore::Expected> expected(const std::string& value, const std::string& regexp) {
  if (!value.empty()) return sigstore::Expected{value, false};
  if (!regexp.empty()) return sigstore::Expected{regexp, true};
  return std::nullopt;
}

void run_verify_bundle(const VerifyBundleOptions& options) {
  sigstore::Policy policy;
  if (!options.key.empty()) {
    if (!options.identity.empty() || !options.identity_regexp.empty() || !options.issuer.empty() ||
        !options.issuer_regexp.empty())
      throw CommandError("--key: verifies a key's signature, without --certificate-* flags",
                         kExitUsage);
    policy.public_key_pem = read_input_file(options.key);
  } else {
    policy.identity = expected(options.identity, options.identity_regexp);
    policy.issuer = expected(options.issuer, options.issuer_regexp);
    if (!policy.identity)
      throw CommandError(
          "--certificate-identity: required (or --certificate-identity-regexp, or --key)",
          kExitUsage);
    if (!policy.issuer)
      throw CommandError(
          "--certificate-oidc-issuer: required (or --certificate-oidc-issuer-regexp, or --key)",
          kExitUsage);
  }
  std::optional<sigstore::TrustedRoot> custom_root;
  if (!options.trusted_root.empty())
    custom_root =
        sigstore::parse_trusted_root(read_input_file(options.trusted_root), options.trusted_root);
  const sigstore::TrustedRoot& root =
      custom_root ? *custom_root : sigstore::public_good_trusted_root();
  sigstore::Bundle bundle = sigstore::parse_bundle(read_input_file(options.bundle), options.bundle);
  sigstore::Artifact artifact;
  std::error_code error;
  // A digest, unless a file has that name (the conformance suite's rule).
  auto digest = digest_argument(options.artifact);
  if (digest && !std::filesystem::exists(options.artifact, error)) {
    artifact = sigstore::Artifact::of_digest(*digest);
  } else if (std::filesystem::is_regular_file(options.artifact, error) &&
             std::filesystem::file_size(options.artifact, error) > kMaxInputBytes) {
    // A large file is hashed as it is read, never held: its digest is what
    // ECDSA and RSA signatures sign.
    artifact = sigstore::Artifact::of_digest(*digest_argument(sha256_file(options.artifact)));
  } else {
    artifact = sigstore::Artifact::of_bytes(read_input_file(options.artifact, /*pipes=*/true));
  }
  sigstore::Verification verified;
  try {
    verified = sigstore::verify_bundle(bundle, artifact, policy, root, std::time(nullptr));
  } catch (const Error& e) {
    throw Error(options.bundle + ": " + e.what());
  }
  std::cout << "sha256:" << sigstore::hex(artifact.sha256) << " verified";
  if (!verified.identity.empty())
    std::cout << ", signed by " << printable(verified.identity) << " (issuer "
              << printable(verified.issuer) << ")";
  else
    std::cout << ", signed by " << options.key;
  if (!verified.times.empty())
    std::cout << " at " << utc_rfc3339(static_cast<std::time_t>(verified.times.front()));
  std::cout << "\n";
}

}  // namespace

void add_verify_command(CLI::App& app) {
  auto* verify = app.add_subcommand("verify", "Verify Sigstore signatures");
  verify->require_subcommand(1);
  auto options = std::make_shared<VerifyBundleOptions>();
  auto* cmd = verify->add_subcommand(
      "bundle",
      "Verify a file (or its sha256: digest) against a Sigstore bundle, keyless (the signer's "
      "identity and OIDC issuer) or with a public key, offline");
  cmd->footer(
      "Examples:\n"
      "  fluxopctl verify bundle --bundle manifests.tgz.sigstore.json \\\n"
      "    --certificate-identity-regexp '^https://github\\.com/controlplaneio-fluxcd/.*$' \\\n"
      "    --certificate-oidc-issuer https://token.actions.githubusercontent.com manifests.tgz\n"
      "  fluxopctl verify bundle --bundle file.sigstore.json --key cosign.pub file");
  cmd->add_option("--bundle", options->bundle, "The Sigstore bundle (JSON)")
      ->required()
      ->option_text("FILE");
  cmd->add_option("--certificate-identity", options->identity,
                  "The signer's identity the certificate must name (a SAN: URI or e-mail)")
      ->option_text("ID");
  cmd->add_option("--certificate-identity-regexp", options->identity_regexp,
                  "Or an RE2 regular expression it must match")
      ->option_text("RE");
  cmd->add_option("--certificate-oidc-issuer", options->issuer,
                  "The OIDC issuer the certificate must name")
      ->option_text("URL");
  cmd->add_option("--certificate-oidc-issuer-regexp", options->issuer_regexp,
                  "Or an RE2 regular expression it must match")
      ->option_text("RE");
  cmd->add_option("--key", options->key,
                  "Verify with this PEM public key instead (ECDSA, Ed25519, RSA)")
      ->option_text("PEM");
  cmd->add_option("--trusted-root", options->trusted_root,
                  "A Sigstore trusted_root.json (default: the public-good instance's, built in)")
      ->option_text("FILE");
  cmd->add_option("FILE_OR_DIGEST", options->artifact,
                  "The signed file, or its digest sha256:<hex>")
      ->required()
      ->option_text(" ");
  cmd->callback([options] { run_verify_bundle(*options); });
}

}  // namespace fluxop::cli
