// Regular expressions in the dialect of Go's regexp, which kustomize compiles
// patch targets and image names with, matched by RE2: time linear in the
// text, no recursion, no backreferences or lookaround.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fluxop::kustomize {

// The longest pattern a user may write. RE2 expands counted repetitions before it
// checks its memory bound: 4 KiB of `a{2,1000}` take 70 MB and 0.2 s to be
// refused, 64 KiB a gigabyte. Targets and image names are far shorter.
inline constexpr std::size_t kMaxRegexBytes = 4096;

class Regex {
 public:
  // The expression `before` + `written` + `after`, where `written` is what a
  // user wrote and the rest is the caller's (anchors, say). Throws
  // fluxop::Error saying what is wrong, e.g. "unbalanced parentheses" or
  // "invalid perl operator: (?=".
  explicit Regex(std::string_view written, std::string_view before = {},
                 std::string_view after = {});

  // Whether the expression matches somewhere in `text`, as Go's MatchString:
  // only anchors in the pattern anchor it.
  bool search(std::string_view text) const;

 private:
  // In RE2's syntax; compiled on use and kept among the last few used, so
  // that memory stays bounded whatever the number of expressions.
  std::string pattern_;
};

}  // namespace fluxop::kustomize
