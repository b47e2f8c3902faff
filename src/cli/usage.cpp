#include "cli/usage.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "core/suggest.h"

namespace fluxop::cli {

namespace {

const CLI::App* find_command(const CLI::App& app, const std::string& word) {
  for (const CLI::App* command : app.get_subcommands({})) {
    if (command->check_name(word)) return command;
  }
  return nullptr;
}

// The option `-X` of `command` or of an app it falls through to.
const CLI::Option* find_short_option(const CLI::App* command, char name) {
  for (; command != nullptr; command = command->get_parent()) {
    if (const CLI::Option* option = command->get_option_no_throw(std::string{'-', name}))
      return option;
    if (!command->get_fallthrough()) break;
  }
  return nullptr;
}

// `--version` after a command: the app's flag would print fluxopctl's version
// and exit 0 in place of the command (its options fall through to the app
// for --color), so that `apply --version 2.9.x`, copied from diff, applied
// nothing and succeeded. A command that does not define it refuses it.
void refuse_app_version_flag(const CLI::App& app, const CLI::App& command, const std::string& arg) {
  if (&command == &app || !(arg == "--version" || arg.starts_with("--version="))) return;
  if (command.get_option_no_throw("--version") != nullptr) return;
  throw CLI::ExtrasError("--version: not a flag of \"" + command.get_name() +
                             "\" (fluxopctl's own version: fluxopctl --version)",
                         CLI::ExitCodes::ExtrasError);
}

// Whether `arg`, an option of the app, takes the next argument as its value
// (`--kubeconfig FILE`, not `--kubeconfig=FILE`).
bool takes_next(const CLI::App& app, const std::string& arg) {
  if (arg.find('=') != std::string::npos || (arg.size() > 2 && arg[1] != '-')) return false;
  const CLI::Option* option = app.get_option_no_throw(arg);
  return option != nullptr && option->get_type_size_max() > 0;
}

// The arguments with the flags before the command moved after its name: the
// command's own flag of that name (-n) takes them, else the app's, which
// every command falls through to.
std::vector<std::string> flags_after_command(const CLI::App& app, int argc,
                                             const char* const* argv) {
  std::vector<std::string> args, before_command;
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--" || !arg.starts_with("-")) break;
    before_command.push_back(arg);
    if (takes_next(app, arg) && i + 1 < argc) before_command.push_back(argv[++i]);
  }
  if (i < argc && find_command(app, argv[i]) != nullptr) args.push_back(argv[i++]);
  args.insert(args.end(), before_command.begin(), before_command.end());
  for (; i < argc; ++i) args.push_back(argv[i]);
  return args;
}

}  // namespace

std::vector<std::string> command_line(const CLI::App& app, int argc, const char* const* argv) {
  std::vector<std::string> args;
  const CLI::App* command = &app;
  bool options_end = false;
  for (std::string& arg : flags_after_command(app, argc, argv)) {
    if (options_end || arg == "--") {
      options_end = true;
    } else if (const CLI::App* sub = find_command(*command, arg)) {
      command = sub;
    } else if (arg.starts_with("--")) {
      refuse_app_version_flag(app, *command, arg);
    } else if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-' && arg[2] == '=') {
      const CLI::Option* option = find_short_option(command, arg[1]);
      if (option != nullptr && option->get_type_size_max() > 0) {
        args.push_back(arg.substr(0, 2));
        arg = arg.substr(3);
      }
    }
    args.push_back(std::move(arg));
  }
  std::reverse(args.begin(), args.end());
  return args;
}

std::string unknown_command(const CLI::App& app, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands({})) names.push_back(command->get_name());
  std::string message = "unknown command \"" + word + "\" for \"" + app.get_name() + "\"";
  if (std::optional<std::string> suggestion = closest(word, names))
    return message + "; did you mean \"" + *suggestion + "\"?";
  return message + "; see '" + app.get_name() + " --help' for the commands";
}

std::string unknown_flag(const CLI::App& command, const std::string& flag) {
  std::string name = flag.substr(0, flag.find('='));
  std::vector<std::string> names;
  for (const CLI::App* at = &command; at != nullptr; at = at->get_parent()) {
    for (const CLI::Option* option : at->get_options()) {
      for (const std::string& long_name : option->get_lnames()) names.push_back("--" + long_name);
    }
  }
  std::string message = "unknown flag " + name;
  if (name.starts_with("--")) {
    if (std::optional<std::string> suggestion = closest(name, names))
      return message + "; did you mean " + *suggestion + "?";
  }
  std::string path = command.get_name();
  for (const CLI::App* at = command.get_parent(); at != nullptr; at = at->get_parent())
    path = at->get_name() + " " + path;
  return message + "; see '" + path + " --help' for the flags";
}

std::string usage_message(const CLI::App& app, const CLI::ParseError& error) {
  if (app.get_subcommands().empty()) {
    for (const std::string& word : app.remaining()) {
      if (!word.starts_with("-")) return unknown_command(app, word);
    }
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    const CLI::App* command = &app;
    while (!command->get_subcommands().empty()) command = command->get_subcommands().front();
    for (const std::string& word : app.remaining(true)) {
      if (word.starts_with("-") && word != "-" && word != "--") return unknown_flag(*command, word);
    }
  }
  // CLI11's sentences start with a capital ("A subcommand is required"); a
  // name in capitals ("FILE or -f FILE is required") stays.
  std::string message = error.what();
  if (message.size() > 1 && std::isupper(static_cast<unsigned char>(message[0])) &&
      !std::isupper(static_cast<unsigned char>(message[1])))
    message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  return message;
}

}  // namespace fluxop::cli
