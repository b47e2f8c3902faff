#include "core/duration.h"

#include <array>
#include <cstdint>
#include <tuple>
#include <utility>

namespace fluxop {

namespace {

constexpr std::uint64_t kLimit = std::uint64_t{1} << 63;  // Go checks against 2^63

constexpr std::array<std::pair<std::string_view, std::uint64_t>, 8> kUnits = {{
    {"ns", 1},
    {"us", 1'000},
    {"\u00b5s", 1'000},  // micro sign
    {"\u03bcs", 1'000},  // Greek mu
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
}};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The integer at the front of `text`, consumed; nullopt past 2^63.
std::optional<std::uint64_t> take_integer(std::string_view& text) {
  std::uint64_t value = 0;
  while (!text.empty() && is_digit(text.front())) {
    if (value > kLimit / 10) return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(text.front() - '0');
    if (value > kLimit) return std::nullopt;
    text.remove_prefix(1);
  }
  return value;
}

// The digits after a decimal point, as an integer and its scale (10^digits);
// digits that would overflow are consumed and ignored, as Go does.
std::pair<std::uint64_t, double> take_fraction(std::string_view& text) {
  std::uint64_t value = 0;
  double scale = 1;
  bool saturated = false;
  for (; !text.empty() && is_digit(text.front()); text.remove_prefix(1)) {
    if (saturated) continue;
    std::uint64_t next = value * 10 + static_cast<std::uint64_t>(text.front() - '0');
    if (value > (kLimit - 1) / 10 || next > kLimit) {
      saturated = true;
      continue;
    }
    value = next;
    scale *= 10;
  }
  return {value, scale};
}

std::optional<std::uint64_t> take_unit(std::string_view& text) {
  std::size_t length = 0;
  while (length < text.size() && !is_digit(text[length]) && text[length] != '.') ++length;
  for (const auto& [name, nanoseconds] : kUnits) {
    if (text.substr(0, length) == name) {
      text.remove_prefix(length);
      return nanoseconds;
    }
  }
  return std::nullopt;
}

// Puts the fractional digits of value / 10^precision, without trailing
// zeros, in front of `out`; returns the whole part.
std::uint64_t write_fraction(std::string& out, std::uint64_t value, int precision) {
  std::string digits;
  bool significant = false;
  for (int i = 0; i < precision; ++i) {
    int digit = static_cast<int>(value % 10);
    significant = significant || digit != 0;
    if (significant) digits.insert(digits.begin(), static_cast<char>('0' + digit));
    value /= 10;
  }
  if (significant) out.insert(0, "." + digits);
  return value;
}

}  // namespace

std::optional<std::chrono::nanoseconds> parse_go_duration(std::string_view text) {
  if (text == "0") return std::chrono::nanoseconds{0};
  if (text.empty()) return std::nullopt;
  std::uint64_t total = 0;
  while (!text.empty()) {
    if (!is_digit(text.front()) && text.front() != '.') return std::nullopt;
    std::size_t before = text.size();
    std::optional<std::uint64_t> whole = take_integer(text);
    if (!whole) return std::nullopt;
    bool has_whole = text.size() != before;
    std::uint64_t fraction = 0;
    double scale = 1;
    bool has_fraction = false;
    if (!text.empty() && text.front() == '.') {
      text.remove_prefix(1);
      before = text.size();
      std::tie(fraction, scale) = take_fraction(text);
      has_fraction = text.size() != before;
    }
    if (!has_whole && !has_fraction) return std::nullopt;
    std::optional<std::uint64_t> unit = take_unit(text);
    if (!unit || *whole > kLimit / *unit) return std::nullopt;
    std::uint64_t value = *whole * *unit;
    if (fraction > 0) {
      // Go computes the fraction in floating point, rounding toward zero.
      value += static_cast<std::uint64_t>(static_cast<double>(fraction) *
                                          (static_cast<double>(*unit) / scale));
      if (value > kLimit) return std::nullopt;
    }
    total += value;
    if (total > kLimit) return std::nullopt;
  }
  if (total > kLimit - 1) return std::nullopt;
  return std::chrono::nanoseconds{static_cast<std::int64_t>(total)};
}

std::string format_go_duration(std::chrono::nanoseconds duration) {
  bool negative = duration.count() < 0;
  std::uint64_t value = static_cast<std::uint64_t>(duration.count());
  if (negative) value = ~value + 1;
  std::string out;
  if (value == 0) return "0s";
  if (value < 1'000'000'000) {
    // Below a second: the largest of ns, µs and ms that keeps a whole part.
    int precision = value < 1'000 ? 0 : value < 1'000'000 ? 3 : 6;
    out = value < 1'000 ? "ns" : value < 1'000'000 ? "\u00b5s" : "ms";
    value = write_fraction(out, value, precision);
    out.insert(0, std::to_string(value));
  } else {
    out = "s";
    value = write_fraction(out, value, 9);
    out.insert(0, std::to_string(value % 60));
    value /= 60;
    if (value > 0) {
      out.insert(0, std::to_string(value % 60) + "m");
      value /= 60;
      if (value > 0) out.insert(0, std::to_string(value) + "h");
    }
  }
  return negative ? "-" + out : out;
}

}  // namespace fluxop
