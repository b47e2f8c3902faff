// Duration flags (--timeout 5m, --older-than 720h) checked as CLI11 parses
// them: a bad value is a usage error (exit 2) naming the flag, before the
// command does anything.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <string>

namespace fluxop::cli {

// Accepts a non-negative Go duration; `example` completes "is not a duration
// such as ...".
CLI::Validator duration_check(const std::string& example);

// A duration flag's value, checked by duration_check at parse time.
std::chrono::seconds duration_flag(const std::string& value);

}  // namespace fluxop::cli
