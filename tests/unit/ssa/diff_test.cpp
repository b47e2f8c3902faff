#include "core/ssa/diff.h"

#include <doctest/doctest.h>

namespace fluxop::ssa {
namespace {

using nlohmann::json;

std::string lines(int from, int to) {
  std::string out;
  for (int i = from; i <= to; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

TEST_CASE("diff: equal texts give nothing") {
  CHECK(unified_diff("a\nb\n", "a\nb\n", "x", "y").empty());
}

TEST_CASE("diff: one change with three lines of context, as diff -u prints it") {
  std::string before = lines(1, 10);
  std::string after = before;
  after.replace(after.find("line 5\n"), 7, "line five\n");
  CHECK(unified_diff(before, after, "live", "merged") ==
        "--- live\n+++ merged\n@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+line five\n"
        " line 6\n line 7\n line 8\n");
}

TEST_CASE("diff: distant changes make separate hunks, as diff -u prints them") {
  std::string before = lines(1, 20);
  std::string after = "line 0\n" + lines(1, 19);
  CHECK(unified_diff(before, after, "a", "b") ==
        "--- a\n+++ b\n@@ -1,3 +1,4 @@\n+line 0\n line 1\n line 2\n line 3\n"
        "@@ -17,4 +18,3 @@\n line 17\n line 18\n line 19\n-line 20\n");
  CHECK(unified_diff("", "new\n", "a", "b") == "--- a\n+++ b\n@@ -0,0 +1 @@\n+new\n");
}

TEST_CASE("diff: fields the API server owns are not compared") {
  json live = {{"kind", "ConfigMap"},
               {"metadata",
                {{"name", "x"},
                 {"uid", "u"},
                 {"resourceVersion", "9"},
                 {"generation", 3},
                 {"creationTimestamp", "t"},
                 {"managedFields", json::array()}}},
               {"status", {{"a", 1}}},
               {"data", {{"k", "v"}}}};
  CHECK(comparable(live) ==
        json{{"kind", "ConfigMap"}, {"metadata", {{"name", "x"}}}, {"data", {{"k", "v"}}}});
}

TEST_CASE("diff: Secret values are masked, and changed ones told apart") {
  json before = {{"kind", "Secret"},
                 {"data", {{"same", "YQ=="}, {"changed", "Yg=="}, {"gone", "Yw=="}}}};
  json after = {{"kind", "Secret"},
                {"data", {{"same", "YQ=="}, {"changed", "ZA=="}, {"new", "ZQ=="}}}};
  mask_secrets(before, after);
  CHECK(before["data"] ==
        json{{"same", "***"}, {"changed", "*** (before)"}, {"gone", "*** (before)"}});
  CHECK(after["data"] == json{{"same", "***"}, {"changed", "*** (after)"}, {"new", "*** (after)"}});
  json created = nullptr;
  json secret = {{"kind", "Secret"}, {"stringData", {{"token", "hunter2"}}}};
  mask_secrets(created, secret);
  CHECK(secret["stringData"]["token"] == "*** (after)");
}

TEST_CASE("diff: the fields that change, as JSON Pointers with their values") {
  json before = json::parse(R"({"kind": "Deployment",
    "metadata": {"labels": {"app": "a", "gone": "x", "a/b~c": "1"}},
    "spec": {"replicas": 1, "template": {"spec": {"containers": [
      {"name": "manager", "image": "source:v1", "args": ["--a", "--b"]}]}}}})");
  json after = json::parse(R"({"kind": "Deployment",
    "metadata": {"labels": {"app": "a", "new": "y", "a/b~c": "2"}},
    "spec": {"replicas": 2, "template": {"spec": {"containers": [
      {"name": "manager", "image": "source:v2", "args": ["--a"]}]}}}})");
  std::vector<FieldChange> changes = field_changes(before, after);
  REQUIRE(changes.size() == 6);
  // A key with "/" and "~" escaped as RFC 6901 says.
  CHECK(changes[0].path == "/metadata/labels/a~1b~0c");
  CHECK(changes[0].before == json("1"));
  CHECK(changes[0].after == json("2"));
  // Removed: no value after; added: none before.
  CHECK(changes[1].path == "/metadata/labels/gone");
  CHECK(changes[1].before == json("x"));
  CHECK_FALSE(changes[1].after);
  CHECK(changes[2].path == "/metadata/labels/new");
  CHECK_FALSE(changes[2].before);
  CHECK(changes[2].after == json("y"));
  CHECK(changes[3].path == "/spec/replicas");
  // A list of the same length item by item; one whose length changes whole.
  CHECK(changes[4].path == "/spec/template/spec/containers/0/args");
  CHECK(changes[4].before == json::array({"--a", "--b"}));
  CHECK(changes[4].after == json::array({"--a"}));
  CHECK(changes[5].path == "/spec/template/spec/containers/0/image");
  CHECK(changes[5].after == json("source:v2"));
}

TEST_CASE("diff: equal objects have no field changes, a changed type is one") {
  json object = {{"spec", {{"a", json::array({1, 2})}}}};
  CHECK(field_changes(object, object).empty());
  std::vector<FieldChange> changes = field_changes({{"a", {{"b", 1}}}}, {{"a", "text"}});
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].path == "/a");
  CHECK(changes[0].before == json{{"b", 1}});
  CHECK(changes[0].after == json("text"));
}

TEST_CASE("diff: a Secret's changed values are masked in its field changes too") {
  json before = {{"kind", "Secret"}, {"data", {{"token", "c2VjcmV0"}, {"same", "YQ=="}}}};
  json after = {{"kind", "Secret"}, {"data", {{"token", "bmV3"}, {"same", "YQ=="}}}};
  mask_secrets(before, after);
  std::vector<FieldChange> changes = field_changes(before, after);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].path == "/data/token");
  CHECK(changes[0].before == json("*** (before)"));
  CHECK(changes[0].after == json("*** (after)"));
}

}  // namespace
}  // namespace fluxop::ssa
