// Running a helper program (a Docker credential helper, a kubeconfig exec
// credential plugin) and collecting what it prints, with a time limit.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace fluxop {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH
  std::vector<std::string> env;   // NAME=value added to (or replacing in) ours
  std::string input;              // written to its stdin, which is then closed; short
  bool capture_stderr = true;     // into the output; else it shares our stderr
  std::string label;              // names it in errors, e.g. "docker-credential-pass get"
  std::chrono::milliseconds timeout{60'000};
  std::size_t max_output = 1 << 20;  // more: it is killed
};

struct ProcessResult {
  int exit_status = 0;  // 128 + signal when killed by one
  std::string output;
};

// Runs the program to its end; nullopt when it cannot be started (not on
// PATH, not executable). Throws fluxop::Error naming `label` when it outlives
// the timeout or prints more than max_output (it is killed then).
std::optional<ProcessResult> run_process(const ProcessSpec& spec);

}  // namespace fluxop
