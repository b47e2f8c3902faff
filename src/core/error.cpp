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

}  // namespace fluxop
