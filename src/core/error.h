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

// How many characters of a value quote() keeps.
inline constexpr std::size_t kQuotedCharacters = 40;

// `value` in double quotes, for quoting what a user wrote in a message: at
// most its first kQuotedCharacters (then "..." after the closing quote), with quotes, backslashes
// and control characters escaped, so that the message stays one short line whatever the value (a 10
// MB string, a line break).
std::string quote(std::string_view value);

// A message as one line for the terminal: line breaks joined, and any run of
// more than kLongestWord characters without a space (a value no quote()
// shortened) cut to its first kQuotedCharacters and "...".
inline constexpr std::size_t kLongestWord = 512;
std::string one_line(std::string_view message);

}  // namespace fluxop
