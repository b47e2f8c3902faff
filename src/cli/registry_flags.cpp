#include "cli/registry_flags.h"
#include "cli/notice.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "core/cache_root.h"
#include "core/error.h"
#include "core/file.h"
#include "core/net/trust.h"

namespace fluxop::cli {

void add_registry_flags(CLI::App& command, RegistryFlags& flags, bool offline) {
  command
      .add_option("--insecure-registry", flags.insecure_registries,
                  "Reach this registry over plain HTTP (repeatable; loopback registries are "
                  "tried over HTTPS first, then plain HTTP)")
      ->option_text("HOST[:PORT]")
      ->allow_extra_args(false);
  command
      .add_option_function<std::string>(
          "--ca-file",
          [&flags](const std::string& path) {
            try {
              flags.ca_pem = net::read_ca_file(path);
            } catch (const Error& e) {
              throw Error(std::string("--ca-file: ") + e.what());
            }
          },
          "Trust the CAs of this PEM file for registries, beside the system's")
      ->option_text("FILE");
  CLI::Option* certs_dir =
      command
          .add_option("--certs-dir", flags.certs_dir,
                      "Trust and client certificates for registries from a directory laid out as "
                      "Docker's certs.d: DIR/HOST[:PORT]/*.crt CAs, *.cert and *.key client "
                      "certificates (default: $" +
                          std::string(net::kCertsDirEnvironment) + ")")
          ->check(CLI::ExistingDirectory)
          ->option_text("DIR");
  // The environment's, checked here so that its error names the variable.
  command.parse_complete_callback([&flags, certs_dir] {
    std::string name(net::kCertsDirEnvironment);
    const char* from_environment = std::getenv(name.c_str());
    if (certs_dir->count() > 0 || !from_environment || !*from_environment) return;
    std::error_code error;
    if (!std::filesystem::is_directory(from_environment, error))
      throw Error(name + ": " + from_environment + ": not a directory");
    flags.certs_dir = from_environment;
  });
  add_request_timeout_flag(command, flags.request_timeout);
  if (offline) {
    command.add_flag("--offline", flags.offline,
                     "Use only fluxopctl's cache; a tag resolves to the digest it last had");
  }
}

void add_artifact_verify_flags(CLI::App& command, RegistryFlags& flags) {
  reconcile::ArtifactVerification& verify = flags.verify;
  CLI::Option* enabled = command.add_flag(
      "--verify", verify.enabled,
      "Verify the distribution artifact's Sigstore signature in its registry before it is pulled "
      "(default signer: a GitHub Actions workflow of controlplaneio-fluxcd) and, for apply and "
      "mirror, every image installed or copied (by its publisher's)");
  command
      .add_option("--certificate-identity-regexp", verify.identity_regexp,
                  "(--verify) The signer's identity must match this RE2 regular expression")
      ->option_text("RE")
      ->needs(enabled);
  command
      .add_option("--certificate-oidc-issuer", verify.issuer,
                  "(--verify) The OIDC issuer the certificate must name")
      ->option_text("URL")
      ->needs(enabled);
  command
      .add_option_function<std::string>(
          "--key", [&verify](const std::string& path) { verify.key_pem = read_input_file(path); },
          "(--verify) Signed with this PEM public key instead")
      ->option_text("PEM")
      ->needs(enabled);
  command
      .add_option_function<std::string>(
          "--trusted-root",
          [&verify](const std::string& path) {
            verify.trusted_root = read_input_file(path);
            verify.trusted_root_name = path;
          },
          "(--verify) A Sigstore trusted_root.json (default: the public-good instance's, built in)")
      ->option_text("FILE")
      ->needs(enabled);
}

std::string artifact_cache_root() { return oci::ArtifactCache::default_root(user_cache_root()); }

reconcile::RegistryArtifacts registry_artifacts(const RegistryFlags& flags) {
  return reconcile::RegistryArtifacts(flags, artifact_cache_root(), print_notice);
}

}  // namespace fluxop::cli
