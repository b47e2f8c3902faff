#include "core/distribution/version.h"

#include <charconv>
#include <vector>

namespace fluxop::distribution {
namespace {

constexpr std::size_t kMaxVersionLength = 256;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool all_digits(std::string_view s) {
  for (char c : s) {
    if (!is_digit(c)) return false;
  }
  return !s.empty();
}

std::optional<std::uint64_t> parse_number(std::string_view digits) {
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::vector<std::string_view> split_dots(std::string_view s) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    std::size_t dot = s.find('.', start);
    parts.push_back(s.substr(start, dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

// Dot-separated non-empty identifiers of [0-9A-Za-z-].
bool valid_identifiers(std::string_view s) {
  for (std::string_view part : split_dots(s)) {
    if (part.empty()) return false;
    for (char c : part) {
      if (!is_identifier_char(c)) return false;
    }
  }
  return true;
}

bool valid_prerelease(std::string_view s) {
  if (!valid_identifiers(s)) return false;
  for (std::string_view part : split_dots(s)) {
    if (all_digits(part) && part.size() > 1 && part[0] == '0') return false;
  }
  return true;
}

// Reads the digits at `pos` into `out`, advancing `pos`; false on none or overflow.
bool read_segment(std::string_view text, std::size_t& pos, std::uint64_t& out) {
  std::size_t start = pos;
  while (pos < text.size() && is_digit(text[pos])) ++pos;
  if (pos == start) return false;
  auto value = parse_number(text.substr(start, pos - start));
  if (!value) return false;
  out = *value;
  return true;
}

// A numeric identifier is one that fits an unsigned 64-bit number.
int compare_identifier(std::string_view a, std::string_view b) {
  if (a == b) return 0;
  if (a.empty()) return -1;
  if (b.empty()) return 1;
  auto na = all_digits(a) ? parse_number(a) : std::nullopt;
  auto nb = all_digits(b) ? parse_number(b) : std::nullopt;
  if (!na && !nb) return a > b ? 1 : -1;
  if (!nb) return -1;
  if (!na) return 1;
  return *na > *nb ? 1 : -1;
}

int compare_numbers(std::uint64_t a, std::uint64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

}  // namespace

bool is_identifier_char(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

std::optional<Version> parse_version(std::string_view text) {
  if (text.size() > kMaxVersionLength) return std::nullopt;
  Version version;
  version.original = std::string(text);
  std::size_t pos = text.starts_with('v') ? 1 : 0;
  if (!read_segment(text, pos, version.major)) return std::nullopt;
  for (std::uint64_t* segment : {&version.minor, &version.patch}) {
    if (pos + 1 < text.size() && text[pos] == '.' && is_digit(text[pos + 1])) {
      ++pos;
      if (!read_segment(text, pos, *segment)) return std::nullopt;
    }
  }
  std::string_view rest = text.substr(pos);
  std::size_t plus = rest.find('+');
  if (plus != std::string_view::npos) {
    version.metadata = std::string(rest.substr(plus + 1));
    if (!valid_identifiers(version.metadata)) return std::nullopt;
    rest = rest.substr(0, plus);
  }
  if (!rest.empty()) {
    if (rest[0] != '-') return std::nullopt;
    version.prerelease = std::string(rest.substr(1));
    if (!valid_prerelease(version.prerelease)) return std::nullopt;
  }
  return version;
}

int compare_prerelease(std::string_view a, std::string_view b) {
  std::vector<std::string_view> pa = split_dots(a), pb = split_dots(b);
  for (std::size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
    std::string_view x = i < pa.size() ? pa[i] : std::string_view();
    std::string_view y = i < pb.size() ? pb[i] : std::string_view();
    if (int d = compare_identifier(x, y)) return d;
  }
  return 0;
}

int compare(const Version& a, const Version& b) {
  if (int d = compare_numbers(a.major, b.major)) return d;
  if (int d = compare_numbers(a.minor, b.minor)) return d;
  if (int d = compare_numbers(a.patch, b.patch)) return d;
  if (a.prerelease.empty() != b.prerelease.empty()) return a.prerelease.empty() ? 1 : -1;
  return compare_prerelease(a.prerelease, b.prerelease);
}

std::string to_string(const Version& version) {
  std::string out = std::to_string(version.major) + "." + std::to_string(version.minor) + "." +
                    std::to_string(version.patch);
  if (!version.prerelease.empty()) out += "-" + version.prerelease;
  if (!version.metadata.empty()) out += "+" + version.metadata;
  return out;
}

}  // namespace fluxop::distribution
