#include <curl/curl.h>
#include <openssl/crypto.h>
#include <zlib.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/output.h"

// The commit, its tree state and date (FLUXOPCTL_GIT_COMMIT,
// FLUXOPCTL_GIT_TREE_STATE, FLUXOPCTL_BUILD_DATE), written at build time by
// cmake/build_info.cmake only when they change.
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
          {"OpenSSL", OpenSSL_version(OPENSSL_VERSION_STRING)},
          {"CLI11", CLI11_VERSION}};
}

}  // namespace

void add_version_command(CLI::App& app) {
  auto format = std::make_shared<OutputFormat>(OutputFormat::Yaml);
  auto* cmd = app.add_subcommand("version", "Print the fluxopctl version");
  add_output_flag(*cmd, *format);
  cmd->callback([cmd, format] {
    if (cmd->count("--output") == 0) {
      std::cout << "fluxopctl " << FLUXOPCTL_VERSION << "\n";
      return;
    }
    nlohmann::ordered_json document = {{"version", FLUXOPCTL_VERSION},
                                       {"gitCommit", FLUXOPCTL_GIT_COMMIT},
                                       {"gitTreeState", FLUXOPCTL_GIT_TREE_STATE},
                                       {"buildDate", FLUXOPCTL_BUILD_DATE},
                                       {"libraries", libraries()}};
    std::cout << render_document(document, *format);
  });
}

}  // namespace fluxop::cli
