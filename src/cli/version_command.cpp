#include <iostream>

#include "cli/commands.h"

namespace fluxop::cli {

void add_version_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("version", "Print the fluxopctl version");
  cmd->callback([] { std::cout << "fluxopctl " << FLUXOPCTL_VERSION << "\n"; });
}

}  // namespace fluxop::cli
