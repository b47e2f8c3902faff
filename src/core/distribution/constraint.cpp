#include "core/distribution/constraint.h"

#include <array>
#include <string>
#include <utility>

namespace fluxop::distribution {
namespace {

using Op = Constraint::Op;
using Term = Constraint::Term;

constexpr std::size_t kMaxConstraintLength = 512;
constexpr std::size_t kMaxGroups = 32;

constexpr std::array<std::pair<std::string_view, Op>, 12> kOperators{{
    {"", Op::Equal},
    {"=", Op::Equal},
    {"!=", Op::NotEqual},
    {">", Op::Greater},
    {"<", Op::Less},
    {">=", Op::GreaterEqual},
    {"=>", Op::GreaterEqual},
    {"<=", Op::LessEqual},
    {"=<", Op::LessEqual},
    {"~", Op::Tilde},
    {"~>", Op::Tilde},
    {"^", Op::Caret},
}};

// Go's regexp \s: no vertical tab, no Unicode spaces.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }

bool is_operator_char(char c) {
  return std::string_view("=!<>~^").find(c) != std::string_view::npos;
}

// The library's segment class also admits '|'; such segments fail later.
bool is_segment_char(char c) {
  return (c >= '0' && c <= '9') || std::string_view("xX*|").find(c) != std::string_view::npos;
}

bool is_wildcard(std::string_view segment) {
  return segment == "x" || segment == "X" || segment == "*";
}

std::size_t skip_spaces(std::string_view s, std::size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

template <typename Pred>
std::size_t skip_while(std::string_view s, std::size_t i, Pred pred) {
  while (i < s.size() && pred(s[i])) ++i;
  return i;
}

// End of dot-separated identifiers starting at i (i itself when there are none).
std::size_t skip_identifiers(std::string_view s, std::size_t i) {
  std::size_t end = skip_while(s, i, is_identifier_char);
  if (end == i) return i;
  while (end + 1 < s.size() && s[end] == '.' && is_identifier_char(s[end + 1])) {
    end = skip_while(s, end + 1, is_identifier_char);
  }
  return end;
}

// Length of the longest version pattern at the start of s, 0 if none:
// v? SEG (.SEG)? (.SEG)? (-IDENTIFIERS)? (+IDENTIFIERS)?
std::size_t version_pattern_length(std::string_view s) {
  std::size_t i = s.starts_with('v') ? 1 : 0;
  std::size_t end = skip_while(s, i, is_segment_char);
  if (end == i) return 0;
  for (int segment = 1; segment < 3; ++segment) {
    std::size_t next =
        end + 1 < s.size() && s[end] == '.' ? skip_while(s, end + 1, is_segment_char) : end;
    if (next <= end + 1) break;
    end = next;
  }
  for (char lead : {'-', '+'}) {
    if (end < s.size() && s[end] == lead) {
      std::size_t next = skip_identifiers(s, end + 1);
      if (next > end + 1) end = next;
    }
  }
  return end;
}

bool is_version_pattern(std::string_view s) {
  return !s.empty() && version_pattern_length(s) == s.size();
}

struct RangeMatch {
  std::size_t end;
  std::string_view text, low, high;
};

// "LOW - HIGH" at i, with the spaces around it.
std::optional<RangeMatch> range_at(std::string_view s, std::size_t i) {
  std::size_t low_start = skip_spaces(s, i);
  std::size_t low_end = skip_while(s, low_start, [](char c) { return !is_space(c); });
  if (!is_version_pattern(s.substr(low_start, low_end - low_start))) return std::nullopt;
  std::size_t dash = skip_spaces(s, low_end);
  if (dash == low_end || dash == s.size() || s[dash] != '-') return std::nullopt;
  std::size_t high_start = skip_spaces(s, dash + 1);
  if (high_start == dash + 1) return std::nullopt;
  std::size_t high_length = version_pattern_length(s.substr(high_start));
  if (high_length == 0) return std::nullopt;
  std::size_t end = skip_spaces(s, high_start + high_length);
  return RangeMatch{end, s.substr(i, end - i), s.substr(low_start, low_end - low_start),
                    s.substr(high_start, high_length)};
}

// Hyphen ranges become ">= LOW, <= HIGH ", found left to right in the
// original text and each substituted at its text's first occurrence, as the
// library does before anything else.
std::string rewrite_ranges(std::string_view s) {
  std::vector<RangeMatch> ranges;
  for (std::size_t i = 0; i < s.size();) {
    auto range = range_at(s, i);
    if (!range) {
      ++i;
      continue;
    }
    ranges.push_back(*range);
    i = range->end;
  }
  std::string out(s);
  for (const RangeMatch& range : ranges) {
    std::size_t at = out.find(range.text);
    if (at == std::string::npos) continue;
    out.replace(at, range.text.size(),
                ">= " + std::string(range.low) + ", <= " + std::string(range.high) + " ");
  }
  return out;
}

std::vector<std::string_view> split_alternatives(std::string_view s) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    std::size_t bar = s.find("||", start);
    parts.push_back(s.substr(start, bar - start));
    if (bar == std::string_view::npos) return parts;
    start = bar + 2;
  }
}

std::optional<Op> operator_named(std::string_view name) {
  for (const auto& [text, op] : kOperators) {
    if (text == name) return op;
  }
  return std::nullopt;
}

// The (operator, version pattern) pairs of one alternative: terms separated
// by spaces or by one comma.
std::optional<std::vector<std::pair<Op, std::string_view>>> split_terms(std::string_view s) {
  std::vector<std::pair<Op, std::string_view>> terms;
  for (std::size_t i = 0;;) {
    std::size_t op_start = skip_spaces(s, i);
    std::size_t op_end = skip_while(s, op_start, is_operator_char);
    auto op = operator_named(s.substr(op_start, op_end - op_start));
    std::size_t start = skip_spaces(s, op_end);
    std::size_t end = skip_while(s, start, [](char c) { return !is_space(c) && c != ','; });
    std::string_view pattern = s.substr(start, end - start);
    if (!op || !is_version_pattern(pattern)) return std::nullopt;
    terms.emplace_back(*op, pattern);
    i = skip_spaces(s, end);
    if (i == s.size()) return terms;
    if (s[i] == ',') {
      ++i;
    } else if (i == end) {
      return std::nullopt;
    }
  }
}

std::optional<Term> parse_term(Op op, std::string_view pattern) {
  std::string_view body = pattern.starts_with('v') ? pattern.substr(1) : pattern;
  std::string_view numbers = body.substr(0, body.find_first_of("-+"));
  std::string_view prerelease;  // with its '-', without any metadata
  if (numbers.size() < body.size() && body[numbers.size()] == '-') {
    std::string_view tail = body.substr(numbers.size());
    prerelease = tail.substr(0, tail.find('+'));
  }
  std::vector<std::string_view> segments;
  for (std::size_t start = 0;;) {
    std::size_t dot = numbers.find('.', start);
    segments.push_back(numbers.substr(start, dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  Term term;
  term.op = op;
  term.wildcard = true;
  std::string bound;
  if (is_wildcard(segments[0])) {
    bound = "0.0.0";
  } else if (segments.size() < 2 || is_wildcard(segments[1])) {
    term.minor_wild = true;
    bound = std::string(segments[0]) + ".0.0";
  } else if (segments.size() < 3 || is_wildcard(segments[2])) {
    term.patch_wild = true;
    bound = std::string(segments[0]) + "." + std::string(segments[1]) + ".0";
  } else {
    term.wildcard = false;
  }
  auto version = parse_version(term.wildcard ? bound + std::string(prerelease) : pattern);
  if (!version) return std::nullopt;
  term.bound = std::move(*version);
  return term;
}

bool is_zero(const Version& v) { return v.major == 0 && v.minor == 0 && v.patch == 0; }

bool tilde(const Term& t, const Version& v) {
  if (compare(v, t.bound) < 0) return false;
  if (is_zero(t.bound) && !t.minor_wild && !t.patch_wild) return true;
  return v.major == t.bound.major && (t.minor_wild || v.minor == t.bound.minor);
}

bool caret(const Term& t, const Version& v) {
  if (compare(v, t.bound) < 0) return false;
  if (t.bound.major > 0 || t.minor_wild) return v.major == t.bound.major;
  if (v.major > 0) return false;
  if (t.bound.minor > 0 || t.patch_wild) return v.minor == t.bound.minor;
  if (v.minor > 0) return false;
  return v.patch == t.bound.patch;
}

bool not_equal(const Term& t, const Version& v) {
  if (t.wildcard) {
    if (v.major != t.bound.major) return true;
    if (t.minor_wild) return false;
    if (v.minor != t.bound.minor) return true;
    if (t.patch_wild) {
      if (v.prerelease.empty() && t.bound.prerelease.empty()) return false;
      return compare_prerelease(v.prerelease, t.bound.prerelease) != 0;
    }
    if (v.patch != t.bound.patch) return true;
  }
  return compare(v, t.bound) != 0;
}

bool greater(const Term& t, const Version& v) {
  if (t.wildcard && v.major != t.bound.major) return v.major > t.bound.major;
  if (t.minor_wild) return false;
  if (t.patch_wild) return v.minor > t.bound.minor;
  return compare(v, t.bound) > 0;
}

bool less_equal(const Term& t, const Version& v) {
  if (!t.wildcard) return compare(v, t.bound) <= 0;
  if (v.major != t.bound.major) return v.major < t.bound.major;
  return t.minor_wild || v.minor <= t.bound.minor;
}

bool satisfies(const Term& t, const Version& v) {
  switch (t.op) {
    case Op::Equal:
      return t.wildcard ? tilde(t, v) : compare(v, t.bound) == 0;
    case Op::NotEqual:
      return not_equal(t, v);
    case Op::Greater:
      return greater(t, v);
    case Op::Less:
      return compare(v, t.bound) < 0;
    case Op::GreaterEqual:
      return compare(v, t.bound) >= 0;
    case Op::LessEqual:
      return less_equal(t, v);
    case Op::Tilde:
      return tilde(t, v);
    case Op::Caret:
      return caret(t, v);
  }
  return false;
}

}  // namespace

std::optional<Constraint> Constraint::parse(std::string_view text) {
  if (text.size() > kMaxConstraintLength) return std::nullopt;
  std::string rewritten = rewrite_ranges(text);
  std::vector<std::string_view> alternatives = split_alternatives(rewritten);
  if (alternatives.size() > kMaxGroups) return std::nullopt;
  Constraint constraint;
  for (std::string_view alternative : alternatives) {
    auto terms = split_terms(alternative);
    if (!terms) return std::nullopt;
    Group group;
    for (const auto& [op, pattern] : *terms) {
      auto term = parse_term(op, pattern);
      if (!term) return std::nullopt;
      group.allows_prerelease |= !term->bound.prerelease.empty();
      group.terms.push_back(std::move(*term));
    }
    constraint.groups_.push_back(std::move(group));
  }
  return constraint;
}

bool Constraint::matches(const Version& version) const {
  for (const Group& group : groups_) {
    if (!version.prerelease.empty() && !group.allows_prerelease) continue;
    bool all = true;
    for (const Term& term : group.terms) all = all && satisfies(term, version);
    if (all) return true;
  }
  return false;
}

}  // namespace fluxop::distribution
