#include "core/oci/credentials.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/base64.h"
#include "core/error.h"
#include "core/file.h"
#include "core/peer_json.h"
#include "core/process.h"

namespace fluxop::oci {

namespace {

constexpr auto kHelperTimeout = std::chrono::seconds(60);
constexpr std::size_t kHelperMaxOutput = 1 << 20;

// Docker keys `auths` by URL ("https://host/v1/") or by host: HOST[:PORT] it is.
std::string normalize_registry_key(std::string_view key) {
  for (std::string_view scheme : {"https://", "http://"}) {
    if (key.starts_with(scheme)) key.remove_prefix(scheme.size());
  }
  return std::string(key.substr(0, key.find('/')));
}

std::string string_field(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

Credential auth_entry(const nlohmann::json& entry, const std::string& where) {
  Credential credential{string_field(entry, "username"), string_field(entry, "password"),
                        string_field(entry, "identitytoken")};
  std::string auth = string_field(entry, "auth");
  if (!auth.empty()) {
    std::optional<std::string> decoded = base64_decode(auth);
    std::size_t colon = decoded ? decoded->find(':') : std::string::npos;
    if (colon == std::string::npos) throw Error(where + ".auth: not base64 of username:password");
    credential.username = decoded->substr(0, colon);
    credential.password = decoded->substr(colon + 1);
  }
  return credential;
}

}  // namespace

DockerConfig DockerConfig::load_default() {
  std::filesystem::path dir;
  if (const char* config = std::getenv("DOCKER_CONFIG"); config && *config) {
    dir = config;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    dir = std::filesystem::path(home) / ".docker";
  } else {
    return {};
  }
  std::string path = (dir / "config.json").string();
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return {};
  // Through the input path: a FIFO or a device in its place is refused, not read.
  return parse(read_input_file(path), path);
}

DockerConfig DockerConfig::parse(std::string_view json, const std::string& origin) {
  nlohmann::json root = parse_peer_json(json);
  if (root.is_discarded() || !root.is_object()) throw Error(origin + ": not a JSON object");
  DockerConfig config;
  config.origin_ = origin;
  if (auto auths = root.find("auths"); auths != root.end() && auths->is_object()) {
    for (const auto& [key, entry] : auths->items()) {
      if (!entry.is_object()) continue;
      config.auths_[normalize_registry_key(key)] = auth_entry(entry, origin + ": auths." + key);
    }
  }
  config.creds_store_ = string_field(root, "credsStore");
  if (auto helpers = root.find("credHelpers"); helpers != root.end() && helpers->is_object()) {
    for (const auto& [key, name] : helpers->items()) {
      if (name.is_string()) config.cred_helpers_[normalize_registry_key(key)] = name;
    }
  }
  return config;
}

Credential DockerConfig::lookup(std::string_view registry) const {
  std::string key(registry);
  if (auto helper = cred_helpers_.find(key); helper != cred_helpers_.end()) {
    return run_credential_helper(helper->second, registry);
  }
  if (!creds_store_.empty()) {
    Credential stored = run_credential_helper(creds_store_, registry);
    if (!stored.empty()) return stored;
  }
  auto entry = auths_.find(key);
  return entry == auths_.end() ? Credential{} : entry->second;
}

std::function<Credential(std::string_view)> default_docker_credentials() {
  auto config = std::make_shared<std::optional<DockerConfig>>();
  return [config](std::string_view registry) {
    if (!*config) *config = DockerConfig::load_default();
    return (*config)->lookup(registry);
  };
}

Credential run_credential_helper(const std::string& name, std::string_view registry) {
  std::string program = "docker-credential-" + name;
  ProcessSpec helper;
  helper.argv = {program, "get"};
  helper.input = std::string(registry) + "\n";
  helper.label = program + " get";
  helper.timeout = kHelperTimeout;
  helper.max_output = kHelperMaxOutput;
  std::optional<ProcessResult> result = run_process(helper);
  if (!result) throw Error(program + ": not found on PATH (named by the Docker config)");
  const std::string& output = result->output;
  if (int status = result->exit_status; status != 0) {
    if (output.find("credentials not found") != std::string::npos) return {};
    // Helpers print a short reason; it never holds the secret they failed to give.
    std::string reason = output.substr(0, output.find('\n'));
    throw Error(program + " get " + std::string(registry) + ": exit status " +
                std::to_string(status) + (reason.empty() ? "" : ": " + reason));
  }
  nlohmann::json answer = parse_peer_json(output);
  if (answer.is_discarded() || !answer.is_object()) {
    throw Error(program + " get " + std::string(registry) + ": its answer is not a JSON object");
  }
  Credential credential{string_field(answer, "Username"), string_field(answer, "Secret"), ""};
  // Docker's convention: the user "<token>" means the secret is an identity token.
  if (credential.username == "<token>") {
    credential.identity_token = credential.password;
    credential.username.clear();
    credential.password.clear();
  }
  return credential;
}

}  // namespace fluxop::oci
