// The fluxopctl command line as a library: every command on one CLI11 app,
// and a command line run on it to its exit code, each error one line on
// stderr. main() adds only what belongs to the process (signals, stdout's
// flush); the unit tests (tests/unit/cli) run command lines through the same
// two functions.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/yaml/parse_cache.h"

namespace fluxop::cli {

// Names the app fluxopctl and registers the global flags, `--version` and
// every command, each with its help's footer (its examples, the global
// flags). The commands that parse manifests read through `parse_cache`.
// When `first_word` (the command line's first argument) names a command,
// only its group is added: CLI11 takes a millisecond to build them all, as
// long as a build from the cache takes in all.
void add_commands(CLI::App& app, yaml::ParseCache& parse_cache, std::string_view first_word = {});

// The commands, in the order of fluxopctl's help, as groups added together:
// the names each adds (none for those never added alone, help and
// completion, which read every command) and how.
struct CommandGroup {
  std::vector<std::string_view> names;
  void (*add)(CLI::App& app, yaml::ParseCache& parse_cache);
};
const std::vector<CommandGroup>& command_groups();

// Parses and runs the command line (argv[0] is the program) on `app`: 0, a
// command's own code (diff's 1 and 2), 1 for an error, kExitUsage for a bad
// flag or argument; each error is `error: <one line>` on stderr. The parse
// cache is committed when the command read everything it parsed.
int run(CLI::App& app, int argc, const char* const* argv, yaml::ParseCache& parse_cache);

// Writes `error: <message, on one line>` to stderr; returns `code`.
int error_line(const std::string& message, int code);

}  // namespace fluxop::cli
