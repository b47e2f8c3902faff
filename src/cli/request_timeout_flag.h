// --request-timeout, of every command that talks to a registry or an API
// server: the bound of one HTTP request (net::HttpOptions::request_timeout).
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>

namespace fluxop::cli {

inline constexpr std::chrono::milliseconds kDefaultRequestTimeout{30'000};

// Adds --request-timeout to `command`, or, when it has it already (a command
// that reaches both a registry and a cluster), makes it also set `timeout`.
void add_request_timeout_flag(CLI::App& command, std::chrono::milliseconds& timeout);

}  // namespace fluxop::cli
