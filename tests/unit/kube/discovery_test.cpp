#include "core/kube/discovery.h"

#include <doctest/doctest.h>

using fluxop::kube::resource_path;
using fluxop::kube::ResourceMapping;

TEST_CASE("discovery: object paths") {
  ResourceMapping configmaps{"", "v1", "ConfigMap", "configmaps", true};
  ResourceMapping deployments{"apps", "v1", "Deployment", "deployments", true};
  ResourceMapping crds{"apiextensions.k8s.io", "v1", "CustomResourceDefinition",
                       "customresourcedefinitions", false};
  CHECK(resource_path(configmaps, "flux-system", "cm") ==
        "/api/v1/namespaces/flux-system/configmaps/cm");
  CHECK(resource_path(configmaps, "flux-system") == "/api/v1/namespaces/flux-system/configmaps");
  CHECK(resource_path(configmaps, "") == "/api/v1/configmaps");  // all namespaces
  CHECK(resource_path(deployments, "ns", "d", "status") ==
        "/apis/apps/v1/namespaces/ns/deployments/d/status");
  CHECK(resource_path(crds, "ignored", "x.example.com") ==
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.example.com");
}

TEST_CASE("discovery: aggregated documents (apidiscovery.k8s.io/v2)") {
  auto mappings = fluxop::kube::parse_aggregated_discovery("GET /apis", R"({
    "kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
    "items": [
      {"metadata": {"creationTimestamp": null},
       "versions": [{"version": "v1", "resources": [
         {"resource": "namespaces", "scope": "Cluster",
          "responseKind": {"group": "", "version": "", "kind": "Namespace"},
          "subresources": [{"subresource": "status"}]},
         {"resource": "configmaps", "scope": "Namespaced",
          "responseKind": {"group": "", "version": "", "kind": "ConfigMap"}}]}]},
      {"metadata": {"name": "fluxcd.controlplane.io"},
       "versions": [{"version": "v1", "freshness": "Current", "resources": [
         {"resource": "fluxinstances", "scope": "Namespaced",
          "responseKind": {"group": "fluxcd.controlplane.io", "version": "v1", "kind": "FluxInstance"}}]}]}]})");
  REQUIRE(mappings);
  REQUIRE(mappings->size() == 3);
  CHECK((*mappings)[0].group.empty());
  CHECK((*mappings)[0].resource == "namespaces");
  CHECK_FALSE((*mappings)[0].namespaced);
  CHECK((*mappings)[1].kind == "ConfigMap");
  CHECK((*mappings)[1].namespaced);
  CHECK((*mappings)[2].group == "fluxcd.controlplane.io");
  CHECK((*mappings)[2].version == "v1");
  CHECK((*mappings)[2].kind == "FluxInstance");

  CHECK_FALSE(fluxop::kube::parse_aggregated_discovery("GET /apis",
                                                       R"({"kind":"APIGroupList","groups":[]})"));
}

TEST_CASE("discovery: APIResourceList, subresources left out") {
  auto mappings = fluxop::kube::parse_resource_list("GET /apis/apps/v1", R"({
    "kind": "APIResourceList", "groupVersion": "apps/v1",
    "resources": [
      {"name": "deployments", "namespaced": true, "kind": "Deployment"},
      {"name": "deployments/status", "namespaced": true, "kind": "Deployment"}]})");
  REQUIRE(mappings.size() == 1);
  CHECK(mappings[0].group == "apps");
  CHECK(mappings[0].version == "v1");
  CHECK(mappings[0].resource == "deployments");
  CHECK(mappings[0].namespaced);
}
