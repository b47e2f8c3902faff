#include "core/kube/auth.h"

#include <ctime>
#include <nlohmann/json.hpp>

#include "core/base64.h"
#include "core/error.h"
#include "core/file.h"
#include "core/kube/meta.h"
#include "core/peer_json.h"
#include "core/process.h"
#include "core/rfc3339.h"

namespace fluxop::kube {

namespace {

using nlohmann::json;

// kubectl waits for plugins as long as they take; a hung plugin must not
// hang fluxopctl, nor one that prints without end fill its memory. Plugins
// are told they are not interactive: a minute is plenty for a token, a
// credential is a few KiB.
constexpr std::chrono::seconds kExecTimeout{60};
constexpr std::size_t kMaxExecOutput = std::size_t{1} << 20;

std::string describe(const ExecPlugin& plugin) {
  return plugin.origin + ": \"" + plugin.command + "\"";
}

// KUBERNETES_EXEC_INFO: what kubectl tells a plugin about the request.
std::string exec_info(const ExecPlugin& plugin, const ClusterAccess& access) {
  json spec = {{"interactive", false}};
  if (plugin.provide_cluster_info) {
    json cluster = {{"server", access.server}};
    if (!access.ca_pem.empty())
      cluster["certificate-authority-data"] = base64_encode(access.ca_pem);
    if (access.insecure_skip_tls_verify) cluster["insecure-skip-tls-verify"] = true;
    spec["cluster"] = cluster;
  }
  json info = {{"apiVersion", plugin.api_version}, {"kind", "ExecCredential"}, {"spec", spec}};
  return info.dump();
}

bool expired(const ExecCredential& credential) {
  return credential.expires && *credential.expires <= std::chrono::system_clock::now();
}

}  // namespace

ExecCredential parse_exec_credential(std::string_view text, const ExecPlugin& plugin) {
  std::string what = describe(plugin);
  std::string why;
  json answer = parse_peer_json(text, &why);
  if (answer.is_discarded()) throw Error(what + ": its output is not an ExecCredential: " + why);
  if (!answer.is_object()) throw Error(what + ": its output is not an ExecCredential (JSON)");
  if (string_member(answer, "kind") != "ExecCredential")
    throw Error(what + ": its output is not an ExecCredential (kind)");
  if (std::string version = string_member(answer, "apiVersion"); version != plugin.api_version) {
    throw Error(what + ": answered apiVersion \"" + version + "\", the kubeconfig asks for \"" +
                plugin.api_version + "\"");
  }
  auto status = answer.find("status");
  if (status == answer.end() || !status->is_object())
    throw Error(what + ": its ExecCredential has no status");
  ExecCredential credential;
  credential.token = string_member(*status, "token");
  if (std::string problem = token_problem(credential.token); !problem.empty())
    throw Error(what + ": its ExecCredential's status.token " + problem);
  credential.client_cert_pem = string_member(*status, "clientCertificateData");
  credential.client_key_pem = string_member(*status, "clientKeyData");
  if (credential.client_cert_pem.empty() != credential.client_key_pem.empty())
    throw Error(what + ": its ExecCredential has only one of clientCertificateData/clientKeyData");
  if (credential.token.empty() && credential.client_cert_pem.empty())
    throw Error(what + ": its ExecCredential has neither a token nor a client certificate");
  if (std::string expiry = string_member(*status, "expirationTimestamp"); !expiry.empty()) {
    credential.expires = parse_rfc3339(expiry);
    if (!credential.expires)
      throw Error(what + ": status.expirationTimestamp \"" + expiry + "\" is not RFC 3339");
  }
  return credential;
}

ExecCredential run_exec_plugin(const ExecPlugin& plugin, const ClusterAccess& access) {
  ProcessSpec spec;
  spec.argv.push_back(plugin.command);
  spec.argv.insert(spec.argv.end(), plugin.args.begin(), plugin.args.end());
  spec.env = plugin.env;
  spec.env.push_back("KUBERNETES_EXEC_INFO=" + exec_info(plugin, access));
  spec.capture_stderr = false;  // its prompts and errors are the user's to read, as in kubectl
  spec.label = describe(plugin);
  spec.timeout = kExecTimeout;
  spec.max_output = kMaxExecOutput;
  std::optional<ProcessResult> result = run_process(spec);
  if (!result) {
    throw Error(describe(plugin) + ": not found or not executable" +
                (plugin.install_hint.empty() ? "" : " (" + plugin.install_hint + ")"));
  }
  if (result->exit_status != 0)
    throw Error(describe(plugin) + ": exit status " + std::to_string(result->exit_status));
  return parse_exec_credential(result->output, plugin);
}

Authenticator::Authenticator(ClusterAccess access) : access_(std::move(access)) {}

std::string Authenticator::file_token() {
  std::error_code error;
  auto time = std::filesystem::last_write_time(access_.token_file, error);
  auto size = error ? 0 : std::filesystem::file_size(access_.token_file, error);
  if (error) throw Error(access_.token_file + ": cannot read the token file");
  if (file_token_.empty() || time != file_time_ || size != file_size_) {
    std::string text = read_input_file(access_.token_file, false, kMaxCredentialFileBytes);
    std::string_view token = text;
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())))
      token.remove_suffix(1);
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.front())))
      token.remove_prefix(1);
    if (token.empty()) throw Error(access_.token_file + ": the token file is empty");
    if (std::string problem = token_problem(token); !problem.empty())
      throw Error(access_.token_file + ": the token " + problem);
    file_token_ = token;
    file_time_ = time;
    file_size_ = size;
  }
  return file_token_;
}

const ExecCredential& Authenticator::exec_credential() {
  if (!exec_ || expired(*exec_)) {
    exec_ = run_exec_plugin(*access_.exec, access_);
    ++exec_runs_;
  }
  return *exec_;
}

RequestCredentials Authenticator::current() {
  RequestCredentials credentials{"", access_.client_cert_pem, access_.client_key_pem};
  if (!access_.token.empty()) {
    credentials.authorization = "Bearer " + access_.token;
  } else if (!access_.token_file.empty()) {
    credentials.authorization = "Bearer " + file_token();
  } else if (!access_.username.empty() || !access_.password.empty()) {
    credentials.authorization = "Basic " + base64_encode(access_.username + ":" + access_.password);
  } else if (access_.exec) {
    const ExecCredential& exec = exec_credential();
    if (!exec.token.empty()) credentials.authorization = "Bearer " + exec.token;
    if (!exec.client_cert_pem.empty()) {
      credentials.client_cert_pem = exec.client_cert_pem;
      credentials.client_key_pem = exec.client_key_pem;
    }
  }
  return credentials;
}

bool Authenticator::forget() {
  // A token file changed since it was read is read again anyway; only a
  // plugin's credential can be stale without the plugin knowing.
  bool used_exec = access_.exec && exec_;
  exec_.reset();
  return used_exec;
}

}  // namespace fluxop::kube
