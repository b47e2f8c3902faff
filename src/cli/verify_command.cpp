#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <set>

#include "cli/commands.h"
#include "cli/image_selection.h"
#include "cli/output.h"
#include "core/digest.h"
#include "core/file.h"
#include "core/oci/registry_access.h"
#include "core/rfc3339.h"
#include "core/signatures/image_signatures.h"
#include "core/sigstore/verify.h"

namespace fluxop::cli {

namespace {

// Who must have signed: cosign's flags (and the Sigstore conformance
// suite's verify-bundle's).
struct SignerFlags {
  std::string identity;
  std::string identity_regexp;
  std::string issuer;
  std::string issuer_regexp;
  std::string key;
  std::string trusted_root;
};

// "logged at TIME" or "timestamped at TIME": when it was signed, as the
// transparency log or the timestamp authority that proves it says.
std::string proven_at(const sigstore::ProvenTime& time) {
  bool timestamped = time.source == sigstore::ProvenTime::Source::timestamp_authority;
  return std::string(timestamped ? "timestamped at " : "logged at ") +
         utc_rfc3339(static_cast<std::time_t>(time.seconds));
}

struct VerifyBundleOptions {
  std::string bundle;
  SignerFlags signer;
  std::string artifact;
};

struct VerifyOptions {
  ImageSelectionFlags selection;  // its FILE: a FluxInstance, or a reference
  SignerFlags signer;
  std::string output = "text";
};

// The raw digest "sha256:<64 hex digits>" names; nullopt for other text.
std::optional<sigstore::Bytes> sha256_of(std::string_view digest) {
  constexpr std::string_view kPrefix = "sha256:";
  if (digest.size() != kPrefix.size() + 64 || !digest.starts_with(kPrefix)) return std::nullopt;
  return sigstore::unhex(digest.substr(kPrefix.size()));
}

// The value the certificate must carry, given as a value or as a regular
// expression. Both at once would be two rules where the user may expect
// either to suffice: refused, as a usage error.
std::optional<sigstore::Expected> expected(const std::string& value, const std::string& regexp,
                                           std::string_view flag) {
  if (!value.empty() && !regexp.empty()) {
    throw CommandError(
        std::string(flag) + "-regexp: give it or " + std::string(flag) + ", not both", kExitUsage);
  }
  if (!value.empty()) return sigstore::Expected{value, false};
  if (!regexp.empty()) return sigstore::Expected{regexp, true};
  return std::nullopt;
}

// The policy the flags give; nullopt when they name no signer (then each
// reference's default applies). Usage errors for flags that do not go together.
std::optional<sigstore::Policy> flag_policy(const SignerFlags& flags) {
  sigstore::Policy policy;
  policy.identity = expected(flags.identity, flags.identity_regexp, "--certificate-identity");
  policy.issuer = expected(flags.issuer, flags.issuer_regexp, "--certificate-oidc-issuer");
  if (!flags.key.empty()) {
    if (policy.identity || policy.issuer)
      throw CommandError("--key: verifies a key's signature, without --certificate-* flags",
                         kExitUsage);
    policy.public_key_pem = read_input_file(flags.key);
    return policy;
  }
  if (!policy.identity && !policy.issuer) return std::nullopt;
  return policy;
}

std::optional<sigstore::TrustedRoot> flag_trusted_root(const SignerFlags& flags) {
  if (flags.trusted_root.empty()) return std::nullopt;
  return sigstore::parse_trusted_root(read_input_file(flags.trusted_root), flags.trusted_root);
}

// `defaults`: what applies without the flags, " (default: ...)" of the
// identity and of the issuer; empty when they are required.
void add_signer_flags(CLI::App& cmd, SignerFlags& flags,
                      const std::pair<std::string, std::string>& defaults) {
  cmd.add_option(
         "--certificate-identity", flags.identity,
         "The signer's identity the certificate must name (a SAN: URI or e-mail)" + defaults.first)
      ->option_text("ID");
  cmd.add_option("--certificate-identity-regexp", flags.identity_regexp,
                 "Or an RE2 regular expression it must match")
      ->option_text("RE");
  cmd.add_option("--certificate-oidc-issuer", flags.issuer,
                 "The OIDC issuer the certificate must name" + defaults.second)
      ->option_text("URL");
  cmd.add_option("--certificate-oidc-issuer-regexp", flags.issuer_regexp,
                 "Or an RE2 regular expression it must match")
      ->option_text("RE");
  cmd.add_option("--key", flags.key,
                 "Verify with this PEM public key instead (ECDSA, Ed25519, RSA)")
      ->option_text("PEM");
  cmd.add_option("--trusted-root", flags.trusted_root,
                 "A Sigstore trusted_root.json (default: the public-good instance's, built in)")
      ->option_text("FILE");
}

void run_verify_bundle(const VerifyBundleOptions& options) {
  std::optional<sigstore::Policy> given = flag_policy(options.signer);
  if (!given || !given->public_key_pem) {
    if (!given || !given->identity)
      throw CommandError(
          "--certificate-identity: required (or --certificate-identity-regexp, or --key)",
          kExitUsage);
    if (!given->issuer)
      throw CommandError(
          "--certificate-oidc-issuer: required (or --certificate-oidc-issuer-regexp, or --key)",
          kExitUsage);
  }
  const sigstore::Policy& policy = *given;
  std::optional<sigstore::TrustedRoot> custom_root = flag_trusted_root(options.signer);
  const sigstore::TrustedRoot& root =
      custom_root ? *custom_root : sigstore::public_good_trusted_root();
  sigstore::Bundle bundle = sigstore::parse_bundle(read_input_file(options.bundle), options.bundle);
  sigstore::Artifact artifact;
  std::error_code error;
  // A digest, unless a file has that name (the conformance suite's rule).
  auto digest = sha256_of(options.artifact);
  if (digest && !std::filesystem::exists(options.artifact, error)) {
    artifact = sigstore::Artifact::of_digest(*digest);
  } else if (std::filesystem::is_regular_file(options.artifact, error) &&
             std::filesystem::file_size(options.artifact, error) > kMaxInputBytes) {
    // A large file is hashed as it is read, never held: its digest is what
    // ECDSA and RSA signatures sign.
    artifact = sigstore::Artifact::of_digest(*sha256_of(sha256_file(options.artifact)));
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
    std::cout << ", signed by " << printable(options.signer.key);
  if (auto time = sigstore::earliest(verified.times)) std::cout << ", " << proven_at(*time);
  std::cout << "\n";
}

// A reference to verify, and who signs it unless the flags say.
struct Target {
  oci::Reference ref;
  std::string_view default_identity;
};

// REF: oci://..., or an image (HOST/REPOSITORY[:TAG][@DIGEST]) that is not
// a file; nullopt for a FluxInstance file (or none).
std::optional<oci::Reference> reference_argument(const std::string& argument) {
  if (argument.rfind("oci://", 0) == 0) return oci::Reference::parse(argument);
  std::error_code error;
  if (argument.empty() || argument == "-" || argument.find('/') == std::string::npos ||
      std::filesystem::exists(argument, error))
    return std::nullopt;
  try {
    return oci::Reference::parse("oci://" + argument);
  } catch (const Error&) {
    return std::nullopt;  // a file that is missing, which loading it says
  }
}

// The artifact and every image a FluxInstance (or the flags) installs, each once.
std::vector<Target> instance_targets(const ImageSelectionFlags& selection) {
  SelectedImages selected = select_images(selection);
  const instance::FluxInstance* flux = selected.instance ? &*selected.instance : nullptr;
  std::vector<Target> targets;
  if (!selected.artifact_url.empty()) {
    oci::Reference artifact = oci::Reference::parse(selected.artifact_url);
    artifact.digest = selected.artifact_digest;
    targets.push_back({artifact, signatures::kControlPlaneIdentity});
  }
  std::set<std::string> seen;
  for (const distribution::VersionImages& version : selected.versions)
    for (const distribution::CatalogImage& image : version.images) {
      std::string url = "oci://" + distribution::installed_name(image, flux) + ":" + image.new_tag +
                        "@" + image.digest;
      if (seen.insert(url).second)
        targets.push_back({oci::Reference::parse(url), signatures::default_identity(image.name)});
    }
  return targets;
}

void run_verify(const VerifyOptions& options) {
  std::optional<sigstore::Policy> given = flag_policy(options.signer);
  std::optional<sigstore::TrustedRoot> custom_root = flag_trusted_root(options.signer);
  const sigstore::TrustedRoot& root =
      custom_root ? *custom_root : sigstore::public_good_trusted_root();
  std::vector<Target> targets;
  if (auto ref = reference_argument(options.selection.input.file))
    targets.push_back({*ref, signatures::default_identity(ref->registry + "/" + ref->repository)});
  else
    targets = instance_targets(options.selection);

  oci::RegistryClient client(oci::registry_options(options.selection.input.registry, {}));
  std::int64_t now = std::time(nullptr);
  bool json = options.output == "json";
  nlohmann::ordered_json verified = nlohmann::ordered_json::array();
  bool failed = false;
  for (const Target& target : targets) {
    sigstore::Policy policy =
        given ? *given : signatures::github_actions_signer(target.default_identity);
    signatures::VerifiedSignature signature;
    try {
      signature = signatures::verify_signature(client, target.ref, policy, root, now);
    } catch (const Error& e) {
      std::cerr << "error: " << one_line(e.what()) << "\n";
      failed = true;
      continue;
    }
    std::string signer =
        signature.identity.empty() ? "key " + options.signer.key : signature.identity;
    if (json) {
      std::string time, source;
      if (signature.time) {
        time = utc_rfc3339(static_cast<std::time_t>(signature.time->seconds));
        source = signature.time->source == sigstore::ProvenTime::Source::timestamp_authority
                     ? "timestampAuthority"
                     : "transparencyLog";
      }
      verified.push_back({{"reference", signature.reference},
                          {"digest", signature.digest},
                          {"identity", signature.identity},
                          {"issuer", signature.issuer},
                          {"time", time},
                          {"timeSource", source},
                          {"signature", signature.found_in}});
      continue;
    }
    std::cout << printable(signature.reference) << " verified, signed by " << printable(signer);
    if (!signature.issuer.empty()) std::cout << " (issuer " << printable(signature.issuer) << ")";
    std::cout << ", " << (signature.time ? proven_at(*signature.time) : "in no log") << "\n";
  }
  if (failed) throw ExitStatus{1};
  if (json) std::cout << render_document(verified, OutputFormat::Json);
}

}  // namespace

void add_verify_command(CLI::App& app) {
  auto* verify = app.add_subcommand(
      "verify",
      "Verify the Sigstore signatures (cosign's) of an image or artifact in its registry, or of "
      "the distribution artifact and every image a FluxInstance installs");
  auto references = std::make_shared<VerifyOptions>();
  add_image_selection_flags(*verify, references->selection);
  verify->get_option("FILE")->description(
      "REF|FILE: an oci:// reference or an image (HOST/REPOSITORY[:TAG][@DIGEST]), or a "
      "FluxInstance YAML file ('-' for stdin)");
  add_signer_flags(*verify, references->signer,
                   {" (default: a GitHub Actions workflow of fluxcd for ghcr.io/fluxcd and "
                    "docker.io/fluxcd images, of controlplaneio-fluxcd for the rest)",
                    " (default: " + std::string(signatures::kGitHubActionsIssuer) + ")"});
  verify->add_option("-o,--output", references->output, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->option_text("text|json");
  verify->footer(
      "Examples:\n"
      "  fluxopctl verify oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests:latest\n"
      "  fluxopctl verify ghcr.io/fluxcd/source-controller:v1.7.0\n"
      "  fluxopctl verify flux-instance.yaml\n"
      "  fluxopctl verify --key cosign.pub registry.example.com/app:v1");
  verify->callback([verify, references] {
    if (verify->get_subcommands().empty()) run_verify(*references);
  });
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
  add_signer_flags(*cmd, options->signer, {});
  cmd->add_option("FILE_OR_DIGEST", options->artifact,
                  "The signed file, or its digest sha256:<hex>")
      ->required()
      ->option_text(" ");
  cmd->callback([options] { run_verify_bundle(*options); });
}

}  // namespace fluxop::cli
