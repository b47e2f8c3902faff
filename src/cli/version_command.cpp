#include <curl/curl.h>
#include <isa-l.h>
#include <openssl/crypto.h>
#include <zlib.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/cluster_flags.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "core/reconcile/instance_object.h"
#include "core/ssa/errors.h"

// The version as `git describe` says it, the commit, its tree state and date
// (FLUXOPCTL_GIT_VERSION, FLUXOPCTL_GIT_COMMIT, FLUXOPCTL_GIT_TREE_STATE,
// FLUXOPCTL_BUILD_DATE), written at build time by cmake/build_info.cmake only
// when they change.
#include "build_info.inc"

namespace fluxop::cli {

namespace {

// The libraries fluxopctl is built with: the version linked at run time when
// the library says it, else the one of its headers.
nlohmann::ordered_json libraries() {
  return {{"yaml-cpp", FLUXOPCTL_YAML_CPP_VERSION},
          {"nlohmann-json", std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                                std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
                                std::to_string(NLOHMANN_JSON_VERSION_PATCH)},
          {"libcurl", curl_version_info(CURLVERSION_NOW)->version},
          {"zlib", zlibVersion()},
          {"ISA-L", std::to_string(ISAL_MAJOR_VERSION) + "." + std::to_string(ISAL_MINOR_VERSION) +
                        "." + std::to_string(ISAL_PATCH_VERSION)},
          {"OpenSSL", OpenSSL_version(OPENSSL_VERSION_STRING)},
          {"CLI11", CLI11_VERSION}};
}

struct VersionOptions {
  OutputFormat format = OutputFormat::Yaml;
  bool client_only = false;
  ClusterFlags cluster;
  std::string ns = "flux-system";
};

struct ServerVersions {
  std::string kubernetes;  // "v1.34.1"
  std::string platform;    // "linux/amd64"
  std::string flux;        // "v2.7.2", or what says none is installed
};

ServerVersions server_versions(const VersionOptions& options) {
  ConnectedCluster connected = connect(options.cluster, /*dry_run=*/false);
  kube::ServerVersion server = connected.cluster->server_version();
  ServerVersions versions{server.git_version, server.platform, ""};
  try {
    versions.flux = reconcile::installed_flux_version(*connected.cluster, options.ns);
    if (versions.flux.empty()) versions.flux = "none in " + options.ns;
  } catch (const kube::ApiError& e) {
    // As kubectl version, which needs only /version: a caller who may not
    // read the instance or the namespace still learns the server's.
    if (!ssa::is_not_allowed(e)) throw;
    versions.flux = "unknown (forbidden to read it in " + options.ns + ")";
  }
  return versions;
}

}  // namespace

void add_version_command(CLI::App& app) {
  auto options = std::make_shared<VersionOptions>();
  auto* cmd = app.add_subcommand(
      "version",
      "Print the fluxopctl version, and when a cluster is configured, its Kubernetes version "
      "and the Flux version installed in it, as kubectl version does");
  add_output_flag(*cmd, options->format);
  cmd->add_flag("--client", options->client_only, "Only the client's version, no cluster");
  add_cluster_flags(*cmd, options->cluster, /*writes=*/false);
  global_option(*cmd, "--namespace").each([options](const std::string& value) {
    options->ns = value;
  });
  cmd->callback([cmd, options] {
    std::optional<ServerVersions> server;
    std::string unreachable;
    if (!options->client_only) {
      try {
        server = server_versions(*options);
      } catch (const kube::NoClusterConfigured&) {
        // fluxopctl renders without a cluster: no cluster is no error here.
      } catch (const Error& e) {
        unreachable = e.what();
      }
    }
    if (cmd->count("--output") == 0) {
      std::cout << "fluxopctl " << FLUXOPCTL_GIT_VERSION << "\n";
      if (server) {
        std::cout << "Server Version: " << printable(server->kubernetes) << "\n"
                  << "Flux Version: " << printable(server->flux) << "\n";
      }
    } else {
      nlohmann::ordered_json document = {{"version", FLUXOPCTL_GIT_VERSION},
                                         {"gitCommit", FLUXOPCTL_GIT_COMMIT},
                                         {"gitTreeState", FLUXOPCTL_GIT_TREE_STATE},
                                         {"buildDate", FLUXOPCTL_BUILD_DATE},
                                         {"libraries", libraries()}};
      if (server) {
        document["serverVersion"] = {{"gitVersion", server->kubernetes},
                                     {"platform", server->platform}};
        document["fluxVersion"] = server->flux;
      }
      std::cout << render_document(document, options->format);
    }
    // As kubectl: the client's version printed, the unreachable server an error.
    if (!unreachable.empty()) throw Error(unreachable);
  });
}

}  // namespace fluxop::cli
