// Colours on stdout: `--color auto|always|never` (auto: only when stdout is a
// terminal), and NO_COLOR (https://no-color.org), which means never unless
// --color always. Commands pass what they print through diff() or change().
#pragma once

#include <string>
#include <string_view>

#include "core/ssa/change_set.h"

namespace CLI {
class App;
}  // namespace CLI

namespace fluxop::cli::color {

enum class Mode { automatic, always, never };

// Whether stdout is coloured in `mode`, given $NO_COLOR (null when unset) and
// whether stdout is a terminal.
bool wanted(Mode mode, const char* no_color, bool terminal);

// The global --color flag: the app's, which every subcommand falls through to.
void add_color_flag(CLI::App& app);

// Sets the mode (the flag does); `automatic` until then.
void set_mode(Mode mode);

// Whether what goes to stdout is coloured.
bool enabled();

// A unified diff (or several, with lines between them), when enabled: file
// headers bold, hunk headers cyan, added lines green, removed lines red.
std::string diff(const std::string& text);

// A change-set line (`Deployment/flux-system/x configured`), when enabled:
// green when created or configured, yellow when replaced, red when deleted.
std::string change(ssa::Action action, const std::string& line);

// A line of `fluxopctl check`, when enabled: its first word, the check's
// status, green when "ok", yellow when "warning", red when "failed".
std::string check_line(const std::string& line);

}  // namespace fluxop::cli::color
