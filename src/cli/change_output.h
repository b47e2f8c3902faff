// How apply and delete print what they change: a line per change on stdout
// as it happens (unchanged objects only with -v, coloured as --color says),
// or with -o json one document once done, carrying the error beside the
// changes when it failed: they happened, and are recorded nowhere else.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/ssa/change_set.h"

namespace fluxop::cli {

// The flags of a command that writes a change set (apply, delete).
struct ChangeSetFlags {
  std::string lock_timeout = "1m";
  std::string dry_run = "none";  // none, client or server
  std::string output;
  // Both dry runs send each write as an API server dry run: nothing is
  // persisted, and what the server would refuse is said.
  bool server_dry_run() const { return dry_run != "none"; }
  bool json() const { return output == "json"; }
};

// --lock-timeout, --dry-run[=none|client|server], -o json.
void add_change_set_flags(CLI::App& command, ChangeSetFlags& flags);

// kubectl's --dry-run: `--dry-run` alone is client, `--dry-run=server`; the
// next argument is never its value (`apply --dry-run FILE`).
CLI::Option* add_dry_run_flag(CLI::App& command, std::string& mode);

// The last line of a dry run, in place of the reconcile's message: what
// would change, and that nothing was written.
std::string dry_run_summary(const std::vector<ssa::Change>& changes);

class ChangeSetOutput {
 public:
  ChangeSetOutput(const ChangeSetFlags& flags, bool verbose);

  // Hears of each change.
  std::function<void(const ssa::Change&)> on_change();
  // The -o json document ({"dryRun", "changes"}), for more fields.
  nlohmann::json& document() { return document_; }
  // Runs `command`; with -o json, prints the document after it, or when it
  // throws, with its error (and rethrows).
  void run(const std::function<void()>& command);

 private:
  bool json_, verbose_;
  std::vector<ssa::Change> changes_;
  nlohmann::json document_;
};

}  // namespace fluxop::cli
