#include "core/suggest.h"

#include <algorithm>
#include <numeric>

namespace fluxop {

namespace {

// Further than this is another word, not a typo (as cobra suggests commands).
constexpr std::size_t kMaxTypoDistance = 2;

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b, bool ignore_case) {
  auto fold = [ignore_case](char c) {
    return ignore_case && c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  };
  // One row of the dynamic-programming table at a time.
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      bool same = fold(a[i - 1]) == fold(b[j - 1]);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest(std::string_view word,
                                   const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = kMaxTypoDistance + 1;
  for (const std::string& candidate : candidates) {
    std::size_t distance = edit_distance(word, candidate);
    if (!word.empty() && candidate.starts_with(word))
      distance = std::min(distance, kMaxTypoDistance);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace fluxop
