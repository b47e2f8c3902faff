#include "core/error.h"

#include <cstdio>

namespace fluxop {

namespace {

bool starts_character(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) != 0x80; }

void append_escaped(std::string& out, char byte) {
  switch (byte) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      break;
  }
  auto code = static_cast<unsigned char>(byte);
  if (code < 0x20 || code == 0x7F) {
    char hex[5];
    std::snprintf(hex, sizeof hex, "\\x%02x", code);
    out += hex;
    return;
  }
  out += byte;
}

}  // namespace

std::string quote(std::string_view value) {
  std::string out = "\"";
  std::size_t characters = 0;
  for (std::size_t at = 0; at < value.size(); ++at) {
    // Cut between characters, never inside one.
    if (starts_character(value[at]) && ++characters > kQuotedCharacters) return out + "\"...";
    append_escaped(out, value[at]);
  }
  return out + "\"";
}

std::string one_line(std::string_view message) {
  std::string out;
  for (std::size_t at = 0; at <= message.size();) {
    std::size_t end = message.find_first_of(" \n\r", at);
    if (end == std::string_view::npos) end = message.size();
    std::string_view word = message.substr(at, end - at);
    std::size_t characters = 0, kept = word.size();
    for (std::size_t i = 0; i < word.size(); ++i) {
      if (!starts_character(word[i])) continue;
      if (++characters == kQuotedCharacters + 1) kept = i;
    }
    out +=
        characters > kLongestWord ? std::string(word.substr(0, kept)) + "..." : std::string(word);
    if (end < message.size()) out += ' ';
    at = end + 1;
  }
  return out;
}

}  // namespace fluxop
