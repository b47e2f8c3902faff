// The fluxopctl subcommands: each registers its flags on the app and runs
// through the callback it installs. Thin: parse flags, call core, print.
#pragma once

#include <CLI/CLI.hpp>

namespace fluxop::cli {

void add_version_command(CLI::App& app);
void add_kustomize_command(CLI::App& app);
void add_build_command(CLI::App& app);
void add_pull_command(CLI::App& app);
void add_push_command(CLI::App& app);

}  // namespace fluxop::cli
