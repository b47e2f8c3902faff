#include "cli/color.h"

#include <doctest/doctest.h>

namespace fluxop::cli::color {
namespace {

TEST_CASE("color: auto colours a terminal unless NO_COLOR is set, the flag overrides") {
  CHECK(wanted(Mode::automatic, nullptr, true));
  CHECK_FALSE(wanted(Mode::automatic, nullptr, false));
  CHECK_FALSE(wanted(Mode::automatic, "1", true));
  // An empty NO_COLOR is as if unset (no-color.org).
  CHECK(wanted(Mode::automatic, "", true));
  CHECK(wanted(Mode::always, "1", false));
  CHECK_FALSE(wanted(Mode::never, nullptr, true));
}

TEST_CASE("color: a diff's file headers bold, hunks cyan, added green, removed red") {
  const std::string diff =
      "--- live Deployment/flux-system/x\n+++ merged Deployment/flux-system/x\n@@ -1,2 +1,2 @@\n"
      " kind: Deployment\n-  replicas: 1\n+  replicas: 2\n"
      "prune ConfigMap/flux-system/y\n";
  set_mode(Mode::never);
  CHECK(color::diff(diff) == diff);
  set_mode(Mode::always);
  CHECK(color::diff(diff) ==
        "\x1b[1m--- live Deployment/flux-system/x\x1b[0m\n"
        "\x1b[1m+++ merged Deployment/flux-system/x\x1b[0m\n"
        "\x1b[36m@@ -1,2 +1,2 @@\x1b[0m\n"
        " kind: Deployment\n"
        "\x1b[31m-  replicas: 1\x1b[0m\n"
        "\x1b[32m+  replicas: 2\x1b[0m\n"
        "prune ConfigMap/flux-system/y\n");
  // A removed line that starts with "-- " is no file header.
  CHECK(color::diff("--- a\n+++ b\n@@ -1 +1 @@\n--- x\n+y\n") ==
        "\x1b[1m--- a\x1b[0m\n\x1b[1m+++ b\x1b[0m\n\x1b[36m@@ -1 +1 @@\x1b[0m\n"
        "\x1b[31m--- x\x1b[0m\n\x1b[32m+y\x1b[0m\n");
  set_mode(Mode::automatic);
}

TEST_CASE("color: change lines by action") {
  set_mode(Mode::always);
  CHECK(change(ssa::Action::Created, "a created") == "\x1b[32ma created\x1b[0m");
  CHECK(change(ssa::Action::Configured, "a configured") == "\x1b[32ma configured\x1b[0m");
  CHECK(change(ssa::Action::Replaced, "a replaced") == "\x1b[33ma replaced\x1b[0m");
  CHECK(change(ssa::Action::Deleted, "a deleted") == "\x1b[31ma deleted\x1b[0m");
  CHECK(change(ssa::Action::Unchanged, "a unchanged") == "a unchanged");
  set_mode(Mode::never);
  CHECK(change(ssa::Action::Deleted, "a deleted") == "a deleted");
  set_mode(Mode::automatic);
}

}  // namespace
}  // namespace fluxop::cli::color
