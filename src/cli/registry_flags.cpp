#include "cli/registry_flags.h"

#include <cstdlib>
#include <iostream>

#include "core/distribution/locate.h"
#include "core/error.h"

namespace fluxop::cli {

void add_registry_flags(CLI::App& command, RegistryFlags& flags, bool offline) {
  command
      .add_option("--insecure-registry", flags.insecure_registries,
                  "Reach this registry over plain HTTP (repeatable; loopback registries always "
                  "may)")
      ->option_text("HOST[:PORT]")
      ->allow_extra_args(false);
  add_request_timeout_flag(command, flags.request_timeout);
  if (offline) {
    command.add_flag("--offline", flags.offline,
                     "Use only fluxopctl's cache; a tag resolves to the digest it last had");
  }
}

oci::RegistryOptions registry_options(const RegistryFlags& flags) {
  oci::RegistryOptions options;
  options.insecure_registries = flags.insecure_registries;
  options.credentials = flags.credentials ? flags.credentials : oci::default_docker_credentials();
  options.http.request_timeout = flags.request_timeout;
  return options;
}

namespace {

std::string default_cache_root() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  return oci::ArtifactCache::default_root(xdg ? xdg : "", home ? home : "");
}

}  // namespace

oci::ArtifactCache default_artifact_cache() {
  std::string root = default_cache_root();
  if (root.empty())
    throw Error("no cache directory for oci:// artifacts: set HOME or XDG_CACHE_HOME");
  return oci::ArtifactCache(root);
}

std::optional<oci::PullResult> pulled_default_artifact() {
  std::string root = default_cache_root();
  if (root.empty()) return std::nullopt;
  oci::ArtifactCache cache(root);
  oci::Reference ref = oci::Reference::parse(distribution::kDefaultArtifact);
  if (!cache.resolve(ref)) return std::nullopt;
  oci::PullOptions options;
  options.offline = true;
  try {
    return oci::pull(cache, ref, options);
  } catch (const Error& e) {
    throw Error(ref.str() + " (as last pulled): " + e.what());
  }
}

oci::PullResult pull_url(std::string_view url, std::string_view origin, const RegistryFlags& flags,
                         const std::function<void(const std::string&)>& notice) {
  auto say = [&notice](const std::string& line) {
    if (notice)
      notice(line);
    else
      std::cerr << line << "\n";
  };
  try {
    oci::ArtifactCache cache = default_artifact_cache();
    oci::PullOptions options;
    options.registry = registry_options(flags);
    options.offline = flags.offline;
    oci::PullResult result = oci::pull(cache, oci::Reference::parse(url), options);
    if (!result.warning.empty()) say("warning: " + result.warning);
    if (result.downloaded) {
      say("pulled " + result.ref.pinned(result.artifact.digest));
    }
    return result;
  } catch (const Error& e) {
    if (origin.empty()) throw;
    throw Error(std::string(origin) + ": " + e.what());
  }
}

}  // namespace fluxop::cli
