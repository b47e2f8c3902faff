// The fluxopctl subcommands: each registers its flags on the app and runs
// through the callback it installs. Thin: parse flags, call core, print.
#pragma once

#include <CLI/CLI.hpp>

#include "core/error.h"
#include "core/yaml/parse_cache.h"

namespace fluxop::cli {

// A usage error: a bad flag or argument, an unknown command.
inline constexpr int kExitUsage = 2;

// Ends a command with this exit code and nothing more to say (e.g. diff's 1:
// there are differences).
struct ExitStatus {
  int code;
};

// An error that exits with its own code instead of 1 (e.g. diff's 2).
class CommandError : public Error {
 public:
  CommandError(const std::string& message, int code) : Error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

void add_version_command(CLI::App& app);
// `help [COMMAND]` (it finds the commands when it runs) and `completion SHELL`.
void add_help_command(CLI::App& app);
void add_completion_command(CLI::App& app);
// The commands that parse manifests do it through `parse_cache`, which
// main commits once a command has succeeded (apply commits or discards it
// itself after each render).
void add_kustomize_command(CLI::App& app, yaml::ParseCache& parse_cache);
void add_build_command(CLI::App& app, yaml::ParseCache& parse_cache);
void add_pull_command(CLI::App& app);
void add_push_command(CLI::App& app);
// images, and mirror: the images a FluxInstance installs, copied with the
// distribution to a registry of one's own.
void add_images_command(CLI::App& app);
void add_mirror_command(CLI::App& app);
void add_apply_command(CLI::App& app, yaml::ParseCache& parse_cache);
void add_diff_command(CLI::App& app, yaml::ParseCache& parse_cache);
void add_check_command(CLI::App& app, yaml::ParseCache& parse_cache);
void add_delete_command(CLI::App& app);
// verify bundle: a file against its Sigstore bundle.
void add_verify_command(CLI::App& app);
// get: the FluxInstance's status; get all: the Flux resources.
void add_get_command(CLI::App& app);
// wait, reconcile, suspend, resume: the requests to the FluxInstance.
void add_request_commands(CLI::App& app);
// The upstream CLI's `export resource FluxInstance/flux`, under `export`.
void add_export_resource_command(CLI::App& export_command);
void add_report_command(CLI::App& app);
// tree KIND/NAME: what a Flux object applied, with each object's readiness.
void add_tree_command(CLI::App& app);
// create secret KIND NAME: the Secrets an instance names.
void add_create_command(CLI::App& app);
// adopt [DIR]: the FluxInstance of a flux bootstrap installation, proven.
void add_adopt_command(CLI::App& app, yaml::ParseCache& parse_cache);

}  // namespace fluxop::cli
