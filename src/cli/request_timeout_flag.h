// --request-timeout, a global flag (as kubectl's) for every command that
// talks to a registry or an API server: the bound of one HTTP request
// (net::HttpOptions::request_timeout).
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>

namespace fluxop::cli {

inline constexpr std::chrono::milliseconds kDefaultRequestTimeout{30'000};

// Defines --request-timeout on the app, before any command is added.
void add_request_timeout_flag(CLI::App& app);

// Makes the app's --request-timeout also set `timeout` when `command` runs.
void add_request_timeout_flag(CLI::App& command, std::chrono::milliseconds& timeout);

}  // namespace fluxop::cli
