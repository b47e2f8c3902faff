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
  std::string dry_run = "none";
  std::string output;
  bool server_dry_run() const { return dry_run == "server"; }
  bool json() const { return output == "json"; }
};

// --lock-timeout, --dry-run none|server, -o json.
void add_change_set_flags(CLI::App& command, ChangeSetFlags& flags);

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
