#include "core/adopt/live_installation.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "../kube/fake_cluster.h"
#include "core/yaml/json.h"

namespace fluxop::adopt {
namespace {

using nlohmann::json;

// A Deployment as the server keeps it after kustomize-controller applied
// it and someone ran `kubectl edit` on it: defaults filled in, the
// controllers' fields, each manager's fields recorded.
json live_deployment() {
  return json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "source-controller", "namespace": "flux-system", "uid": "u1",
      "labels": {"app.kubernetes.io/part-of": "flux", "app.kubernetes.io/instance": "flux-system"},
      "annotations": {"deployment.kubernetes.io/revision": "1"},
      "managedFields": [
        {"manager": "kustomize-controller", "operation": "Apply", "apiVersion": "apps/v1",
         "fieldsV1": {"f:metadata": {"f:labels": {"f:app.kubernetes.io/part-of": {},
                                                  "f:app.kubernetes.io/instance": {}}},
           "f:spec": {"f:template": {"f:spec": {"f:containers": {
             "k:{\"name\":\"manager\"}": {".": {}, "f:name": {}, "f:image": {}, "f:args": {}}}}}}}},
        {"manager": "kubectl-edit", "operation": "Update", "apiVersion": "apps/v1",
         "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {
             "k:{\"name\":\"manager\"}": {"f:env": {"k:{\"name\":\"HTTPS_PROXY\"}": {
               ".": {}, "f:name": {}, "f:value": {}}}}}}}}}},
        {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
         "fieldsV1": {"f:metadata": {"f:annotations": {"f:deployment.kubernetes.io/revision": {}}}}},
        {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
         "apiVersion": "apps/v1", "fieldsV1": {"f:status": {"f:replicas": {}}}}]},
    "spec": {"replicas": 1, "template": {"spec": {"containers": [
      {"name": "manager", "image": "ghcr.io/fluxcd/source-controller:v1.9.4",
       "args": ["--log-level=info"], "terminationMessagePath": "/dev/termination-log",
       "env": [{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}]}]}}},
    "status": {"replicas": 1}
  })");
}

TEST_CASE("adopt: a cluster's installation is what its appliers set, bootstrap's objects only") {
  testing::FakeCluster cluster;
  cluster.served.insert("kustomize.toolkit.fluxcd.io/v1/Kustomization");
  cluster.served.insert("source.toolkit.fluxcd.io/v1/GitRepository");
  auto add = [&](json object) {
    std::string key = testing::FakeCluster::key(kube::object_key(object));
    cluster.objects[key] = std::move(object);
  };
  add(live_deployment());
  add(json::parse(
      R"({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "flux-system"}})"));
  add(json::parse(R"({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "user", "namespace": "flux-system"}})"));
  for (const char* name : {"flux-system", "podinfo"}) {
    add(json{{"apiVersion", "source.toolkit.fluxcd.io/v1"},
             {"kind", "GitRepository"},
             {"metadata", {{"name", name}, {"namespace", "flux-system"}}}});
  }
  add(json::parse(R"({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                      "metadata": {"name": "flux-system", "namespace": "flux-system"}})"));

  Installation installation = read_cluster(cluster, "flux-system");
  CHECK(installation.origin == "namespace flux-system");
  std::vector<std::string> names;
  const json* deployment = nullptr;
  std::vector<json> objects;
  for (const yaml::Node& object : installation.objects)
    objects.push_back(yaml::to_sorted_json(object));
  for (const json& object : objects) {
    names.push_back(object["kind"].get<std::string>() + "/" +
                    object["metadata"]["name"].get<std::string>());
    if (object["kind"] == "Deployment") deployment = &object;
  }
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"Deployment/source-controller",
                                          "GitRepository/flux-system", "Kustomization/flux-system",
                                          "Namespace/flux-system"});
  REQUIRE(deployment);
  json expected = json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "source-controller", "namespace": "flux-system",
      "labels": {"app.kubernetes.io/part-of": "flux", "app.kubernetes.io/instance": "flux-system"}},
    "spec": {"template": {"spec": {"containers": [
      {"name": "manager", "image": "ghcr.io/fluxcd/source-controller:v1.9.4",
       "args": ["--log-level=info"],
       "env": [{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}]}]}}}
  })");
  CHECK(*deployment == expected);
  CHECK(installation.unpatched.size() == installation.objects.size());
  CHECK(installation.patches.empty());
}

// kustomize-controller applies native objects as Go clients write them:
// `strategy: {}`, a Namespace's `spec: {}`, owned with nothing in them,
// which the server fills with its defaults.
TEST_CASE("adopt: a struct kustomize-controller applied empty is not the user's setting") {
  testing::FakeCluster cluster;
  auto add = [&](json object) {
    std::string key = testing::FakeCluster::key(kube::object_key(object));
    cluster.objects[key] = std::move(object);
  };
  auto deployment = [](std::string name, json strategy_fields, json strategy) {
    json fields = {{"f:spec", {{"f:strategy", strategy_fields}, {"f:selector", json::object()}}}};
    json labels = {{"app.kubernetes.io/part-of", "flux"},
                   {"app.kubernetes.io/instance", "flux-system"}};
    json managed = json::array(
        {{{"manager", "kustomize-controller"}, {"operation", "Apply"}, {"fieldsV1", fields}}});
    return json{
        {"apiVersion", "apps/v1"},
        {"kind", "Deployment"},
        {"metadata",
         {{"name", name},
          {"namespace", "flux-system"},
          {"labels", labels},
          {"managedFields", managed}}},
        {"spec", {{"strategy", strategy}, {"selector", {{"matchLabels", {{"app", name}}}}}}}};
  };
  json rolling = {{"type", "RollingUpdate"},
                  {"rollingUpdate", {{"maxSurge", "25%"}, {"maxUnavailable", "25%"}}}};
  add(deployment("helm-controller", json::object(), rolling));
  add(deployment("source-controller", {{"f:type", json::object()}}, {{"type", "Recreate"}}));
  add(json::parse(R"({"apiVersion": "v1", "kind": "Namespace",
    "metadata": {"name": "flux-system", "labels": {"app.kubernetes.io/part-of": "flux"},
      "managedFields": [{"manager": "kustomize-controller", "operation": "Apply",
        "fieldsV1": {"f:metadata": {"f:labels": {"f:app.kubernetes.io/part-of": {}}},
                     "f:spec": {}}}]},
    "spec": {"finalizers": ["kubernetes"]}})"));

  std::map<std::string, json> by_name;
  for (const yaml::Node& object : read_cluster(cluster, "flux-system").objects) {
    json one = yaml::to_sorted_json(object);
    by_name[one["metadata"]["name"].get<std::string>()] = one;
  }
  REQUIRE(by_name.size() == 3);
  // Set empty: nothing of it is the user's.
  CHECK_FALSE(by_name["helm-controller"]["spec"].contains("strategy"));
  CHECK_FALSE(by_name["flux-system"].contains("spec"));
  // Set with a field: that field is.
  CHECK(by_name["source-controller"]["spec"]["strategy"] == json{{"type", "Recreate"}});
  // A field owned whole elsewhere is an atomic value, set in full.
  CHECK(by_name["helm-controller"]["spec"]["selector"] ==
        json{{"matchLabels", {{"app", "helm-controller"}}}});
}

}  // namespace
}  // namespace fluxop::adopt
