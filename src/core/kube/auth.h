// The credentials each request to the API server carries, kept fresh: a
// token file (the in-cluster token rotates) is read again when it changes, an
// exec plugin's credential is kept until it expires or the server answers 401.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "core/kube/kubeconfig.h"

namespace fluxop::kube {

struct RequestCredentials {
  std::string authorization;  // the Authorization header's value; empty for none
  std::string client_cert_pem;
  std::string client_key_pem;
};

// What an exec plugin answered (its ExecCredential's status).
struct ExecCredential {
  std::string token;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::optional<std::chrono::system_clock::time_point> expires;  // never when unset
};

class Authenticator {
 public:
  explicit Authenticator(ClusterAccess access);

  // The credentials for the next request. Throws fluxop::Error naming the
  // token file or the plugin when they cannot be had.
  RequestCredentials current();
  // After a 401: drops a plugin's credential; true when there was one, so
  // that asking again may help.
  bool forget();

  int exec_runs() const { return exec_runs_; }

 private:
  std::string file_token();
  const ExecCredential& exec_credential();

  ClusterAccess access_;
  // The token file's content, with the time and size it had when read.
  std::string file_token_;
  std::filesystem::file_time_type file_time_{};
  std::uintmax_t file_size_ = 0;
  std::optional<ExecCredential> exec_;
  int exec_runs_ = 0;
};

// Runs the plugin for `access` and reads its ExecCredential. Throws
// fluxop::Error naming the plugin (never its output: it may hold secrets).
ExecCredential run_exec_plugin(const ExecPlugin& plugin, const ClusterAccess& access);

// ExecCredential JSON (what a plugin prints) for `plugin`.
ExecCredential parse_exec_credential(std::string_view json, const ExecPlugin& plugin);

}  // namespace fluxop::kube
