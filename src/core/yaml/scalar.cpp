#include "core/yaml/scalar.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace fluxop::yaml {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool one_of(std::string_view s, std::initializer_list<std::string_view> words) {
  return std::find(words.begin(), words.end(), s) != words.end();
}

bool is_special_float(std::string_view s) {
  return one_of(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
                    ".nan", ".NaN", ".NAN"});
}

std::string without_underscores(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c != '_') out += c;
  }
  return out;
}

// Go's strconv.ParseUint(s, 0, 64) digits part: base prefixes 0x, 0o, 0b
// and a leading 0 for octal.
std::optional<std::uint64_t> parse_unsigned_go(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int base = 10;
  if (s.size() >= 2 && s[0] == '0') {
    char p = static_cast<char>(s[1] | 0x20);
    if (p == 'x')
      base = 16, s.remove_prefix(2);
    else if (p == 'o')
      base = 8, s.remove_prefix(2);
    else if (p == 'b')
      base = 2, s.remove_prefix(2);
    else
      base = 8, s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

struct GoInt {
  bool negative = false;
  std::uint64_t magnitude = 0;
};

// Go's ParseInt/ParseUint with base 0, int64 range for signed values.
std::optional<GoInt> parse_go_int(std::string_view s) {
  GoInt result;
  bool sign = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    result.negative = s[0] == '-';
    sign = true;
    s.remove_prefix(1);
  }
  auto magnitude = parse_unsigned_go(s);
  if (!magnitude) return std::nullopt;
  constexpr auto int64_max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (sign && *magnitude > int64_max + (result.negative ? 1 : 0)) return std::nullopt;
  result.magnitude = *magnitude;
  return result;
}

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool is_yaml_float(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    std::size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// Go's ParseFloat fails on overflow, and YAML then reads the text as a string.
bool is_finite_yaml_float(const std::string& s) {
  return is_yaml_float(s) && std::isfinite(std::strtod(s.c_str(), nullptr));
}

// The fields of a YAML timestamp, as Go's time.Parse reads the formats
// "2006-1-2", "2006-1-2T15:4:5.999999999Z07:00" (also 't') and
// "2006-1-2 15:4:5.999999999".
struct Timestamp {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  std::string fraction;  // digits after the dot, trailing zeros removed
  int offset_minutes = 0;
};

bool read_number(std::string_view s, std::size_t& i, std::size_t min_digits, std::size_t max_digits,
                 int& out) {
  std::size_t start = i;
  out = 0;
  while (i < s.size() && is_digit(s[i]) && i - start < max_digits) out = out * 10 + (s[i++] - '0');
  return i - start >= min_digits;
}

bool days_valid(int year, int month, int day) {
  static constexpr std::array<int, 12> days{31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 || day > days[month - 1]) return false;
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return !(month == 2 && day == 29 && !leap);
}

std::optional<Timestamp> parse_timestamp(std::string_view s) {
  Timestamp t;
  std::size_t i = 0;
  if (!read_number(s, i, 4, 4, t.year) || i == s.size() || s[i] != '-') return std::nullopt;
  ++i;
  if (!read_number(s, i, 1, 2, t.month) || i == s.size() || s[i] != '-') return std::nullopt;
  ++i;
  if (!read_number(s, i, 1, 2, t.day) || !days_valid(t.year, t.month, t.day)) return std::nullopt;
  if (i == s.size()) return t;
  char sep = s[i++];
  if (sep != 'T' && sep != 't' && sep != ' ') return std::nullopt;
  if (!read_number(s, i, 1, 2, t.hour) || i == s.size() || s[i++] != ':') return std::nullopt;
  if (!read_number(s, i, 1, 2, t.minute) || i == s.size() || s[i++] != ':') return std::nullopt;
  if (!read_number(s, i, 1, 2, t.second)) return std::nullopt;
  if (t.hour > 23 || t.minute > 59 || t.second > 59) return std::nullopt;
  if (i < s.size() && s[i] == '.') {
    ++i;
    std::size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == start || i - start > 9) return std::nullopt;
    t.fraction = std::string(s.substr(start, i - start));
    while (!t.fraction.empty() && t.fraction.back() == '0') t.fraction.pop_back();
  }
  if (sep == ' ') return i == s.size() ? std::optional(t) : std::nullopt;
  if (i == s.size()) return std::nullopt;
  if (s[i] == 'Z') return i + 1 == s.size() ? std::optional(t) : std::nullopt;
  if (s[i] != '+' && s[i] != '-') return std::nullopt;
  int sign = s[i++] == '-' ? -1 : 1;
  int hours = 0, minutes = 0;
  if (!read_number(s, i, 2, 2, hours) || i == s.size() || s[i++] != ':' ||
      !read_number(s, i, 2, 2, minutes) || i != s.size() || hours > 24 || minutes > 59) {
    return std::nullopt;
  }
  t.offset_minutes = sign * (hours * 60 + minutes);
  return t;
}

std::string two_digits(int v) {
  return std::string{static_cast<char>('0' + v / 10), static_cast<char>('0' + v % 10)};
}

// Go's time.Time JSON form (RFC 3339 with nanoseconds, trailing zeros cut).
std::string rfc3339(const Timestamp& t) {
  std::string out = std::to_string(t.year);
  while (out.size() < 4) out.insert(out.begin(), '0');
  out += "-" + two_digits(t.month) + "-" + two_digits(t.day) + "T" + two_digits(t.hour) + ":" +
         two_digits(t.minute) + ":" + two_digits(t.second);
  if (!t.fraction.empty()) out += "." + t.fraction;
  if (t.offset_minutes == 0) return out + "Z";
  int off = std::abs(t.offset_minutes);
  return out + (t.offset_minutes < 0 ? "-" : "+") + two_digits(off / 60) + ":" +
         two_digits(off % 60);
}

// Int, float or timestamp, by the rules yaml.v2 and yaml.v3 share for plain
// scalars starting with a digit, sign or dot.
std::optional<Tag> resolve_numeric(std::string_view s) {
  if (s.empty()) return std::nullopt;
  char c = s[0];
  if (c == '.') {
    return is_finite_yaml_float(std::string(s)) ? std::optional(Tag::Float) : std::nullopt;
  }
  if (!is_digit(c) && c != '+' && c != '-') return std::nullopt;
  if (is_digit(c) && parse_timestamp(s)) return Tag::Timestamp;
  std::string plain = without_underscores(s);
  if (parse_go_int(plain)) return Tag::Int;
  if (is_finite_yaml_float(plain)) return Tag::Float;
  return std::nullopt;
}

bool is_base60_float(std::string_view s) {
  // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i == s.size() || !is_digit(s[i])) return false;
  while (i < s.size() && (is_digit(s[i]) || s[i] == '_')) ++i;
  int groups = 0;
  while (i < s.size() && s[i] == ':') {
    ++i;
    std::size_t start = i;
    while (i < s.size() && is_digit(s[i]) && i - start < 2) ++i;
    std::size_t n = i - start;
    if (n == 0 || (n == 2 && s[start] > '5')) return false;
    ++groups;
  }
  if (groups == 0) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && (is_digit(s[i]) || s[i] == '_')) ++i;
  }
  return i == s.size();
}

// Go's strconv.FormatFloat(f, 'g', -1, 64), which yaml.v2 writes floats with.
std::string go_format_g(double value) {
  if (value == 0) return std::signbit(value) ? "-0" : "0";
  std::array<char, 64> buf{};
  auto [end, ec] =
      std::to_chars(buf.data(), buf.data() + buf.size(), value, std::chars_format::scientific);
  std::string sci(buf.data(), end);  // "-1.2345e+06"
  auto e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  int exponent = std::stoi(sci.substr(e + 1));
  bool negative = mantissa[0] == '-';
  std::string digits;
  for (char c : mantissa) {
    if (is_digit(c)) digits += c;
  }
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 6) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += exponent < 0 ? "e-" : "e+";
    int a = std::abs(exponent);
    out += a < 10 ? "0" + std::to_string(a) : std::to_string(a);
    return out;
  }
  if (exponent < 0) {
    out += "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    return out;
  }
  auto int_len = static_cast<std::size_t>(exponent + 1);
  if (digits.size() <= int_len) return out + digits + std::string(int_len - digits.size(), '0');
  return out + digits.substr(0, int_len) + "." + digits.substr(int_len);
}

// Go's encoding/json text for a float64: integral values below 1e21 print
// without exponent or fraction, and then read back as ints.
std::optional<std::string> json_integral_text(double value) {
  double a = std::fabs(value);
  if (a >= 1e21 || std::trunc(value) != value) return std::nullopt;
  std::array<char, 64> buf{};
  auto [end, ec] =
      std::to_chars(buf.data(), buf.data() + buf.size(), value, std::chars_format::fixed);
  return std::string(buf.data(), end);
}

std::string canonical_int(std::string_view text) {
  auto value = parse_go_int(without_underscores(text));
  if (!value) return std::string(text);
  if (value->magnitude == 0) return "0";
  return (value->negative ? "-" : "") + std::to_string(value->magnitude);
}

std::string canonical_float(std::string_view text) {
  if (is_special_float(text)) {
    // ".nan" has an "a"; ".inf" has an "n" too.
    if (text.find_first_of("aA") != std::string_view::npos) return ".nan";
    return text[0] == '-' ? "-.inf" : ".inf";
  }
  std::string plain = without_underscores(text);
  if (!plain.empty() && plain[0] == '+') plain.erase(0, 1);
  double value = std::strtod(plain.c_str(), nullptr);
  // Only explicitly tagged floats get here out of range.
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value < 0 ? "-.inf" : ".inf";
  if (auto integral = json_integral_text(value)) {
    // Integers beyond 64 bits are read back by yaml.v2 as floats.
    if (parse_go_int(*integral)) return canonical_int(*integral);
  }
  return go_format_g(value);
}

}  // namespace

std::optional<Tag> resolve_plain(std::string_view text) {
  if (one_of(text, {"", "~", "null", "Null", "NULL"})) return std::nullopt;
  if (one_of(text, {"true", "True", "TRUE", "false", "False", "FALSE"})) return Tag::Bool;
  if (is_special_float(text)) return Tag::Float;
  return resolve_numeric(text).value_or(Tag::String);
}

std::string_view null_word_at(std::string_view rest) {
  for (std::string_view word : {"null", "Null", "NULL", "~"}) {
    if (rest.substr(0, word.size()) == word) {
      std::string_view after = rest.substr(word.size());
      if (after.empty() || std::string_view(" \t\r\n,]}#").find(after[0]) != std::string_view::npos)
        return word;
    }
  }
  return {};
}

bool plain_is_non_string_v2(std::string_view text) {
  if (one_of(text, {"", "~", "null", "Null", "NULL"})) return true;
  if (one_of(text,
             {"y",    "Y",    "yes",   "Yes",   "YES",   "n",  "N",  "no", "No",  "NO",  "true",
              "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF"})) {
    return true;
  }
  if (is_special_float(text)) return true;
  return resolve_numeric(text).has_value() || is_base60_float(text);
}

void read_yaml11_booleans(Node& node) {
  if (node.is_string() && node.style() == Style::Plain) {
    if (one_of(node.text(), {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON"})) {
      node = Node::boolean(true);
    } else if (one_of(node.text(), {"n", "N", "no", "No", "NO", "off", "Off", "OFF"})) {
      node = Node::boolean(false);
    }
  }
  for (Node& item : node.items()) read_yaml11_booleans(item);
  for (auto& entry : node.entries()) read_yaml11_booleans(entry.second);
}

std::optional<std::int64_t> parse_int(std::string_view text) {
  auto value = parse_go_int(without_underscores(text));
  if (!value) return std::nullopt;
  if (value->negative) return -static_cast<std::int64_t>(value->magnitude - 1) - 1;
  if (value->magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(value->magnitude);
}

std::string canonical_text(const Node& scalar) {
  switch (scalar.tag()) {
    case Tag::Int:
      return canonical_int(scalar.text());
    case Tag::Float:
      return canonical_float(scalar.text());
    case Tag::Timestamp:
      if (auto t = parse_timestamp(scalar.text())) return rfc3339(*t);
      return scalar.text();
    case Tag::Bool:
      return scalar.text() == "true" || scalar.text() == "True" || scalar.text() == "TRUE"
                 ? "true"
                 : "false";
    case Tag::String:
      return scalar.text();
  }
  return scalar.text();
}

bool float_is_integral(std::string_view canonical) {
  return canonical.find_first_of(".eEn") == std::string_view::npos;
}

}  // namespace fluxop::yaml
