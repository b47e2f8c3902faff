#include "core/error.h"

#include <cstdio>

#include "core/redact.h"

namespace fluxop {

namespace {

bool starts_character(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) != 0x80; }

// The C1 controls (U+0080..U+009F) are 0xC2 0x80..0x9F in UTF-8; some
// terminals act on them as on ESC sequences (0x9B is CSI).
bool is_c1_control(std::string_view text, std::size_t at) {
  return static_cast<unsigned char>(text[at]) == 0xC2 && at + 1 < text.size() &&
         static_cast<unsigned char>(text[at + 1]) >= 0x80 &&
         static_cast<unsigned char>(text[at + 1]) <= 0x9F;
}

// Appends the character starting at text[at], escaped when it is a control
// character (and, when `quoting`, a quote or a backslash); returns the bytes
// it took.
std::size_t append_printable(std::string& out, std::string_view text, std::size_t at,
                             bool quoting) {
  char byte = text[at];
  if (quoting && (byte == '"' || byte == '\\')) {
    out += '\\';
    out += byte;
    return 1;
  }
  switch (byte) {
    case '\n':
      out += "\\n";
      return 1;
    case '\r':
      out += "\\r";
      return 1;
    case '\t':
      out += "\\t";
      return 1;
    default:
      break;
  }
  char hex[5];
  auto code = static_cast<unsigned char>(byte);
  if (code < 0x20 || code == 0x7F) {
    std::snprintf(hex, sizeof hex, "\\x%02x", code);
    out += hex;
    return 1;
  }
  if (is_c1_control(text, at)) {
    std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(text[at + 1]));
    out += hex;
    return 2;
  }
  out += byte;
  return 1;
}

}  // namespace

std::string printable(std::string_view raw) {
  std::string redacted = redact_secrets(raw);
  std::string_view text = redacted;
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) at += append_printable(out, text, at, false);
  return out;
}

std::string printable_json(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  char code[8];
  for (std::size_t at = 0; at < json.size(); ++at) {
    if (json[at] == 0x7F) {
      out += "\\u007f";
    } else if (is_c1_control(json, at)) {
      std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned char>(json[++at]));
      out += code;
    } else {
      out += json[at];
    }
  }
  return out;
}

std::string quote(std::string_view raw, std::size_t max_characters) {
  std::string redacted = redact_secrets(raw);
  std::string_view value = redacted;
  std::string out = "\"";
  std::size_t characters = 0;
  for (std::size_t at = 0; at < value.size();) {
    // Cut between characters, never inside one.
    if (starts_character(value[at]) && ++characters > max_characters) return out + "\"...";
    at += append_printable(out, value, at, true);
  }
  return out + "\"";
}

std::string one_line(std::string_view raw) {
  std::string redacted = redact_secrets(raw);
  std::string_view message = redacted;
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
    out += printable(characters > kLongestWord ? std::string(word.substr(0, kept)) + "..." : word);
    if (end < message.size()) out += ' ';
    at = end + 1;
  }
  return out;
}

}  // namespace fluxop
