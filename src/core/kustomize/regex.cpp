#include "core/kustomize/regex.h"

#include <re2/re2.h>

#include "core/error.h"

namespace fluxop::kustomize {

namespace {

// Memory for one expression, its program and its DFA cache. Realistic
// targets need a few kilobytes; a DFA that outgrows the cache makes RE2
// fall back to its NFA, slower but still linear, so that a hostile pattern
// costs time in proportion to the text, never memory beyond this.
constexpr std::int64_t kMaxMemory = 1 << 20;

// RE2 accepts \C (any byte), which Go refuses as an invalid escape; \Q...\E
// quotes its text in both.
bool has_any_byte_escape(std::string_view pattern) {
  for (std::size_t at = 0; at + 1 < pattern.size(); ++at) {
    if (pattern[at] != '\\') continue;
    if (pattern[at + 1] == 'C') return true;
    if (pattern[at + 1] == 'Q') {
      at = pattern.find("\\E", at + 2);
      if (at == std::string_view::npos) return false;
    }
    ++at;
  }
  return false;
}

std::string problem(const re2::RE2& regex) {
  switch (regex.error_code()) {
    // RE2's words for these quote the rest of the pattern, with what callers
    // wrapped around it.
    case re2::RE2::ErrorMissingParen:
    case re2::RE2::ErrorUnexpectedParen:
      return "unbalanced parentheses";
    case re2::RE2::ErrorMissingBracket:
      return "missing ]";
    case re2::RE2::ErrorPatternTooLarge:
      return "expression too complex";
    default:
      return regex.error();  // what is wrong and where, e.g. "invalid escape sequence: \1"
  }
}

}  // namespace

Regex::Regex(std::string_view written, std::string_view before, std::string_view after) {
  if (written.size() > kMaxRegexBytes) {
    throw Error("longer than " + std::to_string(kMaxRegexBytes) + " bytes");
  }
  if (has_any_byte_escape(written)) throw Error("invalid escape sequence: \\C");
  std::string pattern;
  pattern.reserve(before.size() + written.size() + after.size());
  pattern.append(before).append(written).append(after);
  re2::RE2::Options options;  // Go's Perl-like syntax, UTF-8
  options.set_max_mem(kMaxMemory);
  options.set_log_errors(false);  // refusals are errors of ours, not lines on stderr
  auto compiled = std::make_shared<const re2::RE2>(pattern, options);
  if (!compiled->ok()) throw Error(problem(*compiled));
  compiled_ = std::move(compiled);
}

bool Regex::search(std::string_view text) const {
  return re2::RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *compiled_);
}

}  // namespace fluxop::kustomize
