// The command line beyond CLI11: kubectl's habits (`-o=json`), an unknown
// command named with the closest one, and every usage error as one line.
// Generic: they work for every command registered on the app.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace fluxop::cli {

// The arguments after the program name, reversed as CLI::App::parse(vector)
// takes them, each `-X=VALUE` of a short option that takes a value split into
// `-X VALUE` (CLI11 alone would read the value "=VALUE").
std::vector<std::string> command_line(const CLI::App& app, int argc, const char* const* argv);

// `unknown command "aply" for "fluxopctl"; did you mean "apply"?`
std::string unknown_command(const CLI::App& app, const std::string& word);

// `unknown flag --ouptut; did you mean --output?`: a flag neither `command`
// nor the app defines, with the closest of theirs.
std::string unknown_flag(const CLI::App& command, const std::string& flag);

// What a CLI11 parse error says, on one line: an unknown command when no
// command was recognised, an unknown flag named with the closest one.
std::string usage_message(const CLI::App& app, const CLI::ParseError& error);

}  // namespace fluxop::cli
