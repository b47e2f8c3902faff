#include "core/oci/credentials.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/base64.h"
#include "core/error.h"
#include "core/file.h"

extern char** environ;

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

// RAII for the pipe ends the parent keeps.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// Writes `input` to the helper's stdin, reads its stdout and stderr into
// `output`, and returns its exit status; kills it past the timeout.
int run_with_input(const std::string& program, const std::string& input, std::string& output) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) throw Error(program + ": cannot create a pipe");
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    throw Error(program + ": cannot create a pipe");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDERR_FILENO);
  char* argv[] = {const_cast<char*>(program.c_str()), const_cast<char*>("get"), nullptr};
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  Fd to_child{in[1]}, from_child{out[0]};
  if (spawned != 0) throw Error(program + ": not found on PATH (named by the Docker config)");

  // The input is one short line: it fits in the pipe's buffer.
  if (write(to_child.fd, input.data(), input.size()) != static_cast<ssize_t>(input.size())) {
    output = "could not write to its input";
  }
  close(to_child.fd);
  to_child.fd = -1;

  auto deadline = std::chrono::steady_clock::now() + kHelperTimeout;
  char buffer[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd fds{from_child.fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&fds, 1, static_cast<int>(left.count())) == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      throw Error(program + " get: no answer within " + std::to_string(kHelperTimeout.count()) +
                  "s");
    }
    ssize_t n = read(from_child.fd, buffer, sizeof buffer);
    if (n <= 0) break;
    if (output.size() < kHelperMaxOutput) output.append(buffer, static_cast<std::size_t>(n));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
  std::optional<std::string> text = read_file_if_exists(path);
  return text ? parse(*text, path) : DockerConfig{};
}

DockerConfig DockerConfig::parse(std::string_view json, const std::string& origin) {
  nlohmann::json root = nlohmann::json::parse(json, nullptr, false);
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
  std::string output;
  int status = run_with_input(program, std::string(registry) + "\n", output);
  if (status != 0) {
    if (output.find("credentials not found") != std::string::npos) return {};
    // Helpers print a short reason; it never holds the secret they failed to give.
    std::string reason = output.substr(0, output.find('\n'));
    throw Error(program + " get " + std::string(registry) + ": exit status " +
                std::to_string(status) + (reason.empty() ? "" : ": " + reason));
  }
  nlohmann::json answer = nlohmann::json::parse(output, nullptr, false);
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
