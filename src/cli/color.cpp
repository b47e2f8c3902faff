#include "cli/color.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

namespace fluxop::cli::color {

namespace {

constexpr std::string_view kBold = "\x1b[1m";
constexpr std::string_view kRed = "\x1b[31m";
constexpr std::string_view kGreen = "\x1b[32m";
constexpr std::string_view kYellow = "\x1b[33m";
constexpr std::string_view kCyan = "\x1b[36m";
constexpr std::string_view kReset = "\x1b[0m";

Mode mode = Mode::automatic;
// Decided on first use, after the flag is parsed.
std::optional<bool> decided;

std::string painted(std::string_view tint, std::string_view text) {
  if (tint.empty()) return std::string(text);
  return std::string(tint) + std::string(text) + std::string(kReset);
}

}  // namespace

bool wanted(Mode mode, const char* no_color, bool terminal) {
  if (mode != Mode::automatic) return mode == Mode::always;
  if (no_color != nullptr && *no_color != '\0') return false;
  return terminal;
}

void add_color_flag(CLI::App& app) {
  const std::map<std::string, Mode> modes{
      {"auto", Mode::automatic}, {"always", Mode::always}, {"never", Mode::never}};
  app.add_option_function<std::string>(
         "--color", [modes](const std::string& value) { set_mode(modes.at(value)); },
         "Colour the output: auto (when stdout is a terminal and NO_COLOR is unset), always or "
         "never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->option_text("auto|always|never (default auto)");
}

void set_mode(Mode new_mode) {
  mode = new_mode;
  decided.reset();
}

bool enabled() {
  if (!decided) decided = wanted(mode, std::getenv("NO_COLOR"), isatty(STDOUT_FILENO) != 0);
  return *decided;
}

std::string diff(const std::string& text) {
  if (!enabled()) return text;
  std::string out;
  std::string_view rest = text;
  bool header = false;  // the line before was a "--- " file header
  while (!rest.empty()) {
    std::size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    // A file header is "--- " then "+++ "; a removed line can start with "--".
    bool old_file = line.starts_with("--- ") && rest.starts_with("+++ ");
    bool new_file = header && line.starts_with("+++ ");
    std::string_view tint;
    if (old_file || new_file)
      tint = kBold;
    else if (line.starts_with("@@ "))
      tint = kCyan;
    else if (line.starts_with("+"))
      tint = kGreen;
    else if (line.starts_with("-"))
      tint = kRed;
    header = old_file;
    out += painted(tint, line);
    if (end != std::string_view::npos) out += '\n';
  }
  return out;
}

std::string change(ssa::Action action, const std::string& line) {
  if (!enabled()) return line;
  switch (action) {
    case ssa::Action::Created:
    case ssa::Action::Configured:
      return painted(kGreen, line);
    case ssa::Action::Replaced:
      return painted(kYellow, line);
    case ssa::Action::Deleted:
      return painted(kRed, line);
    case ssa::Action::Unchanged:
    case ssa::Action::Skipped:
    case ssa::Action::count:
      break;
  }
  return line;
}

std::string check_line(const std::string& line) {
  if (!enabled()) return line;
  std::size_t end = std::min(line.find(' '), line.size());
  std::string_view status = std::string_view(line).substr(0, end);
  std::string_view tint = status == "ok"        ? kGreen
                          : status == "warning" ? kYellow
                          : status == "failed"  ? kRed
                                                : std::string_view();
  return painted(tint, status) + line.substr(end);
}

}  // namespace fluxop::cli::color
