#include "core/quantity.h"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

namespace fluxop {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The digits at the start of `text`, which it is advanced past.
std::string_view take_digits(std::string_view& text) {
  std::size_t end = 0;
  while (end < text.size() && is_digit(text[end])) ++end;
  std::string_view digits = text.substr(0, end);
  text.remove_prefix(end);
  return digits;
}

// An exponent such as "3", "+3" or "-12" that fits 64 bits, as the API
// server reads it.
std::optional<std::int64_t> parse_exponent(std::string_view text) {
  bool negative = !text.empty() && text.front() == '-';
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  if (text.empty() || !std::all_of(text.begin(), text.end(), is_digit)) return std::nullopt;
  // Accumulated negatively, so that the most negative value fits too.
  std::int64_t value = 0;
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  for (char c : text) {
    int digit = c - '0';
    if (value < (kMin + digit) / 10) return std::nullopt;
    value = value * 10 - digit;
  }
  if (negative) return value;
  if (value == kMin) return std::nullopt;
  return -value;
}

}  // namespace

std::optional<Quantity> parse_quantity(std::string_view text) {
  if (text.empty()) return std::nullopt;
  Quantity out;
  if (text.front() == '-' || text.front() == '+') {
    out.negative = text.front() == '-';
    text.remove_prefix(1);
  }
  out.integer = take_digits(text);
  if (!text.empty() && text.front() == '.') {
    text.remove_prefix(1);
    out.fraction = take_digits(text);
  }
  static constexpr std::array<std::pair<std::string_view, int>, 10> kDecimal = {{{"n", -9},
                                                                                 {"u", -6},
                                                                                 {"m", -3},
                                                                                 {"", 0},
                                                                                 {"k", 3},
                                                                                 {"M", 6},
                                                                                 {"G", 9},
                                                                                 {"T", 12},
                                                                                 {"P", 15},
                                                                                 {"E", 18}}};
  static constexpr std::array<std::pair<std::string_view, int>, 6> kBinary = {
      {{"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}}};
  for (const auto& [suffix, power] : kDecimal) {
    if (text == suffix) {
      out.decimal_exponent = power;
      return out;
    }
  }
  for (const auto& [suffix, power] : kBinary) {
    if (text == suffix) {
      out.binary_exponent = power;
      return out;
    }
  }
  if (text.size() < 2 || (text.front() != 'e' && text.front() != 'E')) return std::nullopt;
  std::optional<std::int64_t> exponent = parse_exponent(text.substr(1));
  if (!exponent) return std::nullopt;
  out.decimal_exponent = *exponent;
  return out;
}

bool is_positive(const Quantity& quantity) {
  auto nonzero = [](std::string_view digits) {
    return std::any_of(digits.begin(), digits.end(), [](char c) { return c != '0'; });
  };
  return !quantity.negative && (nonzero(quantity.integer) || nonzero(quantity.fraction));
}

}  // namespace fluxop
