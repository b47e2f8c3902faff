#include "core/kube/meta.h"

#include <doctest/doctest.h>

using fluxop::kube::annotation_is;
using fluxop::kube::any_in_metadata;
using fluxop::kube::array_at;
using fluxop::kube::at;
using fluxop::kube::condition_at;
using fluxop::kube::equal_fold;
using fluxop::kube::integer_at;
using fluxop::kube::pointer_token;
using fluxop::kube::string_at;
using fluxop::kube::string_member;
using fluxop::kube::text_at;
using fluxop::kube::true_at;
using nlohmann::json;

TEST_CASE("meta: a field of another type is absent, a malformed pointer finds nothing") {
  json object = {{"metadata", {{"name", "flux"}, {"generation", 3}, {"labels", {{"a/b", "c"}}}}},
                 {"spec", {{"suspend", true}, {"list", json::array({1})}, {"name", 7}}}};
  CHECK(text_at(object, "/metadata/name") == "flux");
  CHECK(string_at(object, "/spec/name") == std::nullopt);
  CHECK(text_at(object, "/spec/name").empty());
  CHECK(integer_at(object, "/metadata/generation") == 3);
  CHECK(integer_at(object, "/metadata/name") == std::nullopt);
  CHECK(true_at(object, "/spec/suspend"));
  CHECK_FALSE(true_at(object, "/metadata/name"));
  CHECK(array_at(object, "/spec/list").size() == 1);
  CHECK(array_at(object, "/spec/suspend").empty());
  CHECK(at(object, "/metadata/labels/" + pointer_token("a/b")) != nullptr);
  CHECK(at(object, "metadata") == nullptr);
  CHECK(at(object, "/metadata/~2") == nullptr);
  CHECK(at(json("text"), "/metadata") == nullptr);
  CHECK(string_member(object["metadata"]["labels"], "a/b") == "c");
  CHECK(string_member(json::array(), "a").empty());
}

TEST_CASE("meta: a condition by its type, the first object of that type") {
  json object = {{"status",
                  {{"conditions", json::array({"text",
                                               {{"type", 7}},
                                               {{"type", "Ready"}, {"status", "False"}},
                                               {{"type", "Ready"}, {"status", "True"}}})}}}};
  REQUIRE(condition_at(object, "Ready") != nullptr);
  CHECK(string_member(*condition_at(object, "Ready"), "status") == "False");
  CHECK(condition_at(object, "Stalled") == nullptr);
  CHECK(condition_at(json{{"status", {{"conditions", "Ready"}}}}, "Ready") == nullptr);
  CHECK(condition_at(json::array(), "Ready") == nullptr);
}

TEST_CASE("meta: pointer tokens and case folding") {
  CHECK(pointer_token("fluxcd.io/a~b") == "fluxcd.io~1a~0b");
  CHECK(equal_fold("Disabled", "disabled"));
  CHECK_FALSE(equal_fold("disable", "disabled"));
}

TEST_CASE("meta: the reporter's rule reads labels and annotations, the instance's annotations") {
  constexpr const char* key = "fluxcd.controlplane.io/reconcile";
  json labelled = {{"metadata", {{"labels", {{key, "DISABLED"}}}}}};
  json annotated = {{"metadata", {{"annotations", {{key, "Disabled"}}}}}};
  json enabled = {{"metadata", {{"annotations", {{key, "enabled"}}}}}};
  CHECK(any_in_metadata(labelled, key, "disabled"));
  CHECK(any_in_metadata(annotated, key, "disabled"));
  CHECK_FALSE(any_in_metadata(enabled, key, "disabled"));
  CHECK_FALSE(any_in_metadata(json::object(), key, "disabled"));
  CHECK(annotation_is(annotated, key, "disabled"));
  CHECK_FALSE(annotation_is(labelled, key, "disabled"));
}
