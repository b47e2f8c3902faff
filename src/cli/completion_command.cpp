#include <iostream>
#include <memory>
#include <string_view>
#include <utility>

#include "cli/commands.h"

namespace fluxop::cli {

namespace {

// completions/*, compiled in (generated/completions.inc) so that the
// installed binary needs no data files.
constexpr std::pair<std::string_view, std::string_view> kCompletionFiles[] = {
#include "completions.inc"
};

std::string_view completion_script(const std::string& shell) {
  std::string_view file = shell == "bash"  ? "fluxopctl.bash"
                          : shell == "zsh" ? "_fluxopctl"
                                           : "fluxopctl.fish";
  for (const auto& [name, text] : kCompletionFiles) {
    if (name == file) return text;
  }
  throw Error("completions/" + std::string(file) + ": not compiled in");
}

}  // namespace

void add_completion_command(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "completion",
      "Print the completion script of bash, zsh or fish, e.g. for ~/.bashrc: source <(fluxopctl "
      "completion bash)");
  cmd->add_option("SHELL", *shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}))
      ->option_text(" ");
  cmd->callback([shell] { std::cout << completion_script(*shell); });
}

}  // namespace fluxop::cli
