#include "core/base64.h"

namespace fluxop {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int decode_char(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string base64_encode(std::string_view data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < data.size(); i += 3) {
    std::size_t n = std::min<std::size_t>(3, data.size() - i);
    unsigned bits = 0;
    for (std::size_t j = 0; j < 3; ++j) {
      bits = bits << 8 | (j < n ? static_cast<unsigned char>(data[i + j]) : 0u);
    }
    for (std::size_t j = 0; j < 4; ++j) {
      out += j <= n ? kAlphabet[(bits >> (18 - 6 * j)) & 63] : '=';
    }
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    std::size_t padding = 0;
    unsigned bits = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      char c = text[i + j];
      int value = decode_char(c);
      if (c == '=' && last && j >= 2 && (j == 3 || text[i + 3] == '=')) {
        ++padding;
        value = 0;
      } else if (value < 0 || padding > 0) {
        return std::nullopt;
      }
      bits = bits << 6 | static_cast<unsigned>(value);
    }
    for (std::size_t j = 0; j < 3 - padding; ++j)
      out += static_cast<char>((bits >> (16 - 8 * j)) & 0xff);
  }
  return out;
}

}  // namespace fluxop
