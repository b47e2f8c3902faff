#include "core/display.h"

#include <array>
#include <utility>

#include "core/error.h"
#include "core/redact.h"
#include "core/utf8.h"

namespace fluxop {

namespace {

using Range = std::pair<char32_t, char32_t>;

// Characters that take no column: combining marks, zero-width spaces and
// joiners, variation selectors, the byte order mark.
constexpr std::array<Range, 9> kZeroWidth = {{{0x0300, 0x036F},
                                              {0x1AB0, 0x1AFF},
                                              {0x1DC0, 0x1DFF},
                                              {0x200B, 0x200F},
                                              {0x2060, 0x2064},
                                              {0x20D0, 0x20FF},
                                              {0xFE00, 0xFE0F},
                                              {0xFE20, 0xFE2F},
                                              {0xFEFF, 0xFEFF}}};
// Characters that take two: the East Asian wide and full-width blocks, and
// the emoji blocks terminals draw two columns wide.
constexpr std::array<Range, 14> kWide = {{{0x1100, 0x115F},
                                          {0x2E80, 0x303E},
                                          {0x3041, 0x33FF},
                                          {0x3400, 0x4DBF},
                                          {0x4E00, 0x9FFF},
                                          {0xA000, 0xA4CF},
                                          {0xAC00, 0xD7A3},
                                          {0xF900, 0xFAFF},
                                          {0xFE30, 0xFE4F},
                                          {0xFF00, 0xFF60},
                                          {0xFFE0, 0xFFE6},
                                          {0x1F300, 0x1F64F},
                                          {0x1F900, 0x1F9FF},
                                          {0x20000, 0x3FFFD}}};

template <std::size_t N>
bool in(const std::array<Range, N>& ranges, char32_t code) {
  for (const auto& [first, last] : ranges) {
    if (code >= first && code <= last) return true;
  }
  return false;
}

// One character of `text` at `at`: its bytes (1 for a byte that starts no
// valid UTF-8 sequence) and its code point.
struct Character {
  std::size_t bytes = 1;
  char32_t code = 0;
};
Character character_at(std::string_view text, std::size_t at) {
  Character character;
  character.bytes = decode_utf8(text, at, character.code);
  if (character.bytes == 0) character = {1, static_cast<unsigned char>(text[at])};
  return character;
}

std::size_t columns_of(const Character& character) {
  if (character.bytes == 1) return 1;
  if (in(kZeroWidth, character.code)) return 0;
  return in(kWide, character.code) ? 2 : 1;
}

// The character at `at` as the terminal gets it (escaped when a control
// character: an escape is one piece, never cut), its columns and its bytes.
struct Piece {
  std::string text;
  std::size_t columns = 0;
  std::size_t bytes = 1;
};
Piece piece_at(std::string_view text, std::size_t at) {
  Character character = character_at(text, at);
  Piece piece{printable(text.substr(at, character.bytes)), 0, character.bytes};
  piece.columns = piece.text.size() > character.bytes ? piece.text.size()  // "\x1b", "\n"
                                                      : columns_of(character);
  return piece;
}

}  // namespace

std::size_t display_columns(std::string_view text) {
  std::size_t columns = 0;
  for (std::size_t at = 0; at < text.size();) {
    Character character = character_at(text, at);
    columns += columns_of(character);
    at += character.bytes;
  }
  return columns;
}

std::string printable_within(std::string_view text, std::size_t columns) {
  constexpr std::string_view kCut = "...";
  std::string redacted = redact_secrets(text);
  std::size_t room = columns > kCut.size() ? columns - kCut.size() : 0;
  // One pass, no further than the width: the pieces while they fit, and
  // where the cut goes should the rest not.
  std::string out;
  std::size_t total = 0, cut_bytes = std::string::npos, cut_columns = 0;
  for (std::size_t at = 0; at < redacted.size();) {
    Piece piece = piece_at(redacted, at);
    if (cut_bytes == std::string::npos && total + piece.columns > room) {
      cut_bytes = out.size();
      cut_columns = total;
    }
    total += piece.columns;
    if (total > columns) {
      out.resize(cut_bytes);
      return out + std::string(kCut.substr(0, columns - cut_columns));
    }
    out += piece.text;
    at += piece.bytes;
  }
  return out;
}

}  // namespace fluxop
