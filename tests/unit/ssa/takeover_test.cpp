#include "core/ssa/takeover.h"

#include <doctest/doctest.h>

namespace fluxop::ssa {
namespace {

using nlohmann::json;

TEST_CASE("takeover: other tools' annotations, labels and managers are removed") {
  json live = {{"metadata",
                {{"resourceVersion", "42"},
                 {"annotations",
                  {{"kubectl.kubernetes.io/last-applied-configuration", "{}"},
                   {"meta.helm.sh/release-name", "flux"},
                   {"keep/me", "x"}}},
                 {"labels",
                  {{"kustomize.toolkit.fluxcd.io/name", "flux-system"},
                   {"app.kubernetes.io/managed-by", "Helm"},
                   {"app.kubernetes.io/part-of", "flux"}}},
                 {"managedFields",
                  {{{"manager", "kubectl"}, {"operation", "Apply"}},
                   {{"manager", "flux-operator"}, {"operation", "Apply"}},
                   {{"manager", "before-first-apply"}, {"operation", "Update"}}}}}}};
  json patch = takeover_patch(live, "flux-operator");
  REQUIRE(patch.is_array());
  CHECK(patch[0] == json{{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", "42"}});
  std::vector<std::string> paths;
  for (const json& op : patch) paths.push_back(op["path"]);
  CHECK(std::find(paths.begin(), paths.end(),
                  "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration") !=
        paths.end());
  CHECK(std::find(paths.begin(), paths.end(), "/metadata/annotations/meta.helm.sh~1release-name") !=
        paths.end());
  CHECK(std::find(paths.begin(), paths.end(),
                  "/metadata/labels/kustomize.toolkit.fluxcd.io~1name") != paths.end());
  CHECK(std::find(paths.begin(), paths.end(), "/metadata/labels/app.kubernetes.io~1managed-by") !=
        paths.end());
  CHECK(std::find(paths.begin(), paths.end(), "/metadata/annotations/keep~1me") == paths.end());
  CHECK(patch.back() == json{{"op", "replace"},
                             {"path", "/metadata/managedFields"},
                             {"value", {{{"manager", "flux-operator"}, {"operation", "Apply"}}}}});
}

TEST_CASE("takeover: the fields of other tools and hand edits pass to the manager") {
  json live = json::parse(R"({"apiVersion": "apps/v1", "metadata": {"resourceVersion": "9",
    "managedFields": [
      {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
       "fieldsV1": {"f:status": {"f:replicas": {}}}},
      {"manager": "flux-operator", "operation": "Apply", "apiVersion": "apps/v1",
       "fieldsV1": {"f:spec": {"f:replicas": {}}}},
      {"manager": "kubectl-edit", "operation": "Update",
       "fieldsV1": {"f:spec": {"f:paused": {}}}},
      {"manager": "before-first-apply", "operation": "Update",
       "fieldsV1": {"f:spec": {"f:minReadySeconds": {}}, "f:status": {"f:replicas": {}}}},
      {"manager": "kubectl-rollout", "operation": "Update",
       "fieldsV1": {"f:spec": {"f:template": {}}}}]}})");
  json patch = takeover_patch(live, "flux-operator");
  REQUIRE(patch.is_array());
  REQUIRE(patch.size() == 2);
  json expected = json::parse(R"([
      {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
       "fieldsV1": {"f:status": {"f:replicas": {}}}},
      {"manager": "flux-operator", "operation": "Apply", "apiVersion": "apps/v1",
       "fieldsType": "FieldsV1",
       "fieldsV1": {"f:spec": {"f:replicas": {}, "f:paused": {}, "f:minReadySeconds": {}}}},
      {"manager": "kubectl-rollout", "operation": "Update",
       "fieldsV1": {"f:spec": {"f:template": {}}}}])");
  CHECK(patch[1] ==
        json{{"op", "replace"}, {"path", "/metadata/managedFields"}, {"value", expected}});
}

TEST_CASE("takeover: an object kubectl alone manages has its managed fields cleared") {
  json live = {{"metadata",
                {{"resourceVersion", "7"},
                 {"managedFields", {{{"manager", "kubectl"}, {"operation", "Apply"}}}}}}};
  json patch = takeover_patch(live, "flux-operator");
  REQUIRE(patch.is_array());
  CHECK(patch.back() == json{{"op", "replace"},
                             {"path", "/metadata/managedFields"},
                             {"value", json::array({json::object()})}});
}

TEST_CASE("takeover: nothing to do gives null") {
  json live = {{"metadata",
                {{"resourceVersion", "1"},
                 {"labels", {{"app.kubernetes.io/managed-by", "flux-operator"}}},
                 {"managedFields", {{{"manager", "flux-operator"}}}}}}};
  CHECK(takeover_patch(live, "flux-operator").is_null());
  CHECK(takeover_patch(json::object(), "flux-operator").is_null());
}

}  // namespace
}  // namespace fluxop::ssa
