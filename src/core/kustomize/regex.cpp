#include "core/kustomize/regex.h"

#include <re2/re2.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/error.h"

namespace fluxop::kustomize {

namespace {

// Memory for one expression, its program and its DFA cache. Realistic
// targets need a few kilobytes; a DFA that outgrows the cache makes RE2
// fall back to its NFA, slower but still linear, so that a hostile pattern
// costs time in proportion to the text, never memory beyond this.
constexpr std::int64_t kMaxMemory = 1 << 20;

// How many expressions stay compiled. Each one's DFA cache grows with the
// text it scans, up to kMaxMemory: a kustomization of thousands of patches
// with hostile targets over long names would otherwise hold them all, past a
// gigabyte. Builds use a few patterns, which all stay.
constexpr std::size_t kCompiledKept = 32;

std::shared_ptr<const re2::RE2> compile(const std::string& pattern) {
  re2::RE2::Options options;  // Go's Perl-like syntax, UTF-8
  options.set_max_mem(kMaxMemory);
  options.set_log_errors(false);  // refusals are errors of ours, not lines on stderr
  return std::make_shared<const re2::RE2>(pattern, options);
}

// The expressions compiled last, the most recently used first.
class CompiledExpressions {
 public:
  std::shared_ptr<const re2::RE2> get(const std::string& pattern) {
    std::lock_guard lock(mutex_);
    auto found = std::find_if(kept_.begin(), kept_.end(),
                              [&](const auto& entry) { return entry.first == pattern; });
    if (found == kept_.end()) {
      if (kept_.size() == kCompiledKept) kept_.pop_back();
      found = kept_.emplace(kept_.end(), pattern, compile(pattern));
    }
    std::rotate(kept_.begin(), found, found + 1);
    return kept_.front().second;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<std::string, std::shared_ptr<const re2::RE2>>> kept_;
};

CompiledExpressions compiled_expressions;

bool is_name_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Go's syntax in RE2's, where they differ: Go refuses \C (any byte), which
// RE2 accepts; Go (since 1.22) names a group (?<name>...) as well as
// (?P<name>...), RE2 only the latter. The rest is copied as it is: escapes,
// \Q...\E quoted text and character classes, where neither applies.
std::string in_re2_syntax(std::string_view go) {
  std::string re2;
  re2.reserve(go.size() + 8);
  std::size_t at = 0;
  auto copy_to = [&](std::size_t end) {
    re2.append(go.substr(at, end - at));
    at = end;
  };
  bool in_class = false;
  while (at < go.size()) {
    std::string_view rest = go.substr(at);
    if (rest.size() > 1 && rest[0] == '\\') {
      if (rest[1] == 'C') throw Error("invalid escape sequence: \\C");
      std::size_t end = at + 2;
      if (rest[1] == 'Q' && !in_class) {
        std::size_t quote_end = go.find("\\E", end);
        end = quote_end == std::string_view::npos ? go.size() : quote_end + 2;
      }
      copy_to(end);
    } else if (in_class) {
      std::size_t posix_end =
          rest.starts_with("[:") ? go.find(":]", at + 2) : std::string_view::npos;
      in_class = posix_end != std::string_view::npos || rest[0] != ']';
      copy_to(posix_end != std::string_view::npos ? posix_end + 2 : at + 1);
    } else if (rest[0] == '[') {
      in_class = true;
      // A ']' first in a class, after any '^', is one of its characters.
      std::size_t first = rest.starts_with("[^") ? at + 2 : at + 1;
      copy_to(first < go.size() && go[first] == ']' ? first + 1 : first);
    } else if (rest.size() > 3 && rest.starts_with("(?<") && is_name_character(rest[3])) {
      re2 += "(?P<";
      at += 3;
    } else {
      copy_to(at + 1);
    }
  }
  return re2;
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
      break;
  }
  // What is wrong and the part at fault, e.g. "invalid escape sequence: \1";
  // a long part (a group's name, say) quoted by its start.
  const std::string& at_fault = regex.error_arg();
  if (at_fault.size() <= kQuotedCharacters) return regex.error();
  return regex.error().substr(0, regex.error().size() - at_fault.size()) + quote(at_fault);
}

}  // namespace

Regex::Regex(std::string_view written, std::string_view before, std::string_view after) {
  if (written.size() > kMaxRegexBytes) {
    throw Error("longer than " + std::to_string(kMaxRegexBytes) + " bytes");
  }
  pattern_ = std::string(before).append(in_re2_syntax(written)).append(after);
  std::shared_ptr<const re2::RE2> compiled = compiled_expressions.get(pattern_);
  if (!compiled->ok()) throw Error(problem(*compiled));
}

bool Regex::search(std::string_view text) const {
  std::shared_ptr<const re2::RE2> compiled = compiled_expressions.get(pattern_);
  return re2::RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *compiled);
}

}  // namespace fluxop::kustomize
