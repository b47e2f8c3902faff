// The real Flux distribution beside the repository (../shared/flux-distribution),
// which a few tests read; nothing of it is kept in the repository.
//
// doctest cannot skip a test case at run time, and its skip() decorator drops
// the case from --list-test-cases, so ctest would not even show it. Instead a
// test starts with
//
//   if (!fluxop::testing::have_shared_distribution()) return;
//
// which, when the distribution is missing, fails the test in CI (CI=true: CI
// provides it) and elsewhere prints kSkipMarker, which ctest's
// SKIP_REGULAR_EXPRESSION on the unit tests turns into "Skipped".
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace fluxop::testing {

inline const std::string kSharedDistribution =
    FLUXOPCTL_TEST_DATA "/../../shared/flux-distribution";

// What ctest's SKIP_REGULAR_EXPRESSION matches in a unit test's output.
inline constexpr std::string_view kSkipMarker = "SKIPPED (missing prerequisite):";

inline bool have_shared_distribution() {
  if (std::filesystem::is_directory(kSharedDistribution + "/flux")) return true;
  const char* ci = std::getenv("CI");
  if (ci != nullptr && std::string_view(ci) == "true") {
    FAIL_CHECK("no Flux distribution at " << kSharedDistribution << " (CI must provide it)");
  } else {
    MESSAGE(kSkipMarker << " no Flux distribution at " << kSharedDistribution);
  }
  return false;
}

}  // namespace fluxop::testing
