// The one error type of the core: its message is a complete, single line
// meant for the user (e.g. "kustomization.yaml: patches[0].target.kind: invalid regex").
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace fluxop {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// The one escaper for text that reaches a terminal or a log: every string a
// peer or a file supplied (a status message, a revision, an object's name)
// goes through it, so that none can move the cursor, clear the screen, set
// the window title or start a line of its own. Control characters (C0, DEL,
// and C1 as UTF-8 encodes them) become "\n", "\r", "\t" or "\xNN"; the
// rest, other UTF-8 included, is kept.
std::string printable(std::string_view text);

// JSON text as a JSON printer writes it (C0 escaped, the rest raw) with DEL
// and the C1 controls escaped too ("\u007f", "\u009b"): the same JSON, as
// printable() would have the terminal see it. Outside strings JSON holds no
// such byte, so the text stays valid.
std::string printable_json(std::string_view json);

// How many characters of a value quote() keeps.
inline constexpr std::size_t kQuotedCharacters = 40;
// A path's (PATH_MAX): an archive's entry is named whole.
inline constexpr std::size_t kQuotedPathCharacters = 4096;

// `value` in double quotes, for quoting what a user wrote in a message: at
// most its first `max_characters` (then "..." after the closing quote), with
// quotes and backslashes escaped and the rest as printable() writes it, so
// that the message stays one short line whatever the value (a 10 MB string,
// a line break).
std::string quote(std::string_view value, std::size_t max_characters = kQuotedCharacters);

// A message as one line for the terminal: line breaks joined, other control
// characters escaped as printable() does, and any run of more than
// kLongestWord characters without a space (a value no quote() shortened) cut
// to its first kQuotedCharacters and "...".
inline constexpr std::size_t kLongestWord = 512;
std::string one_line(std::string_view message);

}  // namespace fluxop
