// "Did you mean ...?": the closest of some names to a mistyped one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fluxop {

// The Levenshtein distance: the fewest insertions, deletions and
// substitutions of one character that turn `a` into `b`; with `ignore_case`,
// a slip of ASCII case is no edit.
std::size_t edit_distance(std::string_view a, std::string_view b, bool ignore_case = false);

// The candidate nearest to `word` when it is a likely typo of it: at most 2
// edits away, or starting with `word`. Ties go to the earliest candidate.
std::optional<std::string> closest(std::string_view word,
                                   const std::vector<std::string>& candidates);

}  // namespace fluxop
