#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/usage.h"

namespace fluxop::cli {

void add_help_command(CLI::App& app) {
  auto command = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("help", "Print the help of fluxopctl, or of COMMAND");
  cmd->add_option("COMMAND", *command, "A command, e.g. apply")->option_text(" ");
  cmd->callback([&app, command] {
    // (app.help() would print the help of the command running: help's.)
    if (command->empty()) {
      std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
      return;
    }
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->check_name(*command)) {
        std::cout << sub->help(app.get_name());
        return;
      }
    }
    throw CommandError(unknown_command(app, *command), kExitUsage);
  });
}

}  // namespace fluxop::cli
