#include "core/suggest.h"

#include <doctest/doctest.h>

#include "core/ascii.h"

namespace fluxop {
namespace {

TEST_CASE("suggest: edit distance counts insertions, deletions and substitutions") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("apply", "apply") == 0);
  CHECK(edit_distance("aply", "apply") == 1);
  CHECK(edit_distance("appply", "apply") == 1);
  CHECK(edit_distance("apple", "apply") == 1);
  CHECK(edit_distance("versoin", "version") == 2);
  CHECK(edit_distance("", "diff") == 4);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("Version", "version") == 1);
  CHECK(edit_distance("Version", "versoin", /*ignore_case=*/true) == 2);
  CHECK(edit_distance("ÄB", "äb", /*ignore_case=*/true) == 1);  // ASCII letters only: Ä is not ä
}

TEST_CASE("ascii: lowercase folds ASCII letters only") {
  CHECK(lowercase("Content-Type: ÄB") == "content-type: Äb");
}

TEST_CASE("suggest: the closest command to a typo, none to another word") {
  const std::vector<std::string> commands{"build", "apply", "diff", "pull", "push", "version"};
  CHECK(closest("aply", commands) == "apply");
  CHECK(closest("buidl", commands) == "build");
  CHECK(closest("versoin", commands) == "version");
  CHECK(closest("ver", commands) == "version");  // a prefix
  CHECK(closest("pus", commands) == "push");
  // "pu" starts both pull and push: the earlier one wins.
  CHECK(closest("pu", commands) == "pull");
  CHECK_FALSE(closest("frobnicate", commands).has_value());
  CHECK_FALSE(closest("x", {}).has_value());
}

}  // namespace
}  // namespace fluxop
