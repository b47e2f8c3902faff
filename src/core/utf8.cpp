#include "core/utf8.h"

#include <cstdint>

namespace fluxop {

std::size_t decode_utf8(std::string_view s, std::size_t i, char32_t& code_point) {
  auto lead = static_cast<unsigned char>(s[i]);
  std::size_t w = lead < 0x80             ? 1
                  : (lead & 0xE0) == 0xC0 ? 2
                  : (lead & 0xF0) == 0xE0 ? 3
                  : (lead & 0xF8) == 0xF0 ? 4
                                          : 0;
  if (w == 0 || i + w > s.size()) return 0;
  std::uint32_t cp = w == 1 ? lead : (lead & (0x7Fu >> w));
  for (std::size_t k = 1; k < w; ++k) {
    auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3F);
  }
  static constexpr std::uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinimum[w] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  code_point = cp;
  return w;
}

namespace {

std::size_t valid_sequence_at(std::string_view s, std::size_t i) {
  char32_t ignored;
  return decode_utf8(s, i, ignored);
}

}  // namespace

std::optional<std::size_t> first_invalid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t w = valid_sequence_at(s, i);
    if (w == 0) return i;
    i += w;
  }
  return std::nullopt;
}

std::string to_valid_utf8(std::string_view s) {
  if (!first_invalid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (std::size_t i = 0; i < s.size();) {
    std::size_t w = valid_sequence_at(s, i);
    if (w == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, w));
      i += w;
    }
  }
  return out;
}

}  // namespace fluxop
