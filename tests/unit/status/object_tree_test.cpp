#include "core/status/object_tree.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "../kube/fake_cluster.h"
#include "core/error.h"

namespace fluxop::status {
namespace {

using nlohmann::json;

json entry(const std::string& id, const std::string& version) {
  return {{"id", id}, {"v", version}};
}

json applier(const std::string& api_version, const std::string& kind, const std::string& ns,
             const std::string& name, json entries) {
  return {{"apiVersion", api_version},
          {"kind", kind},
          {"metadata", {{"name", name}, {"namespace", ns}, {"generation", 1}}},
          {"status",
           {{"observedGeneration", 1},
            {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})},
            {"inventory", {{"entries", std::move(entries)}}}}}};
}

json object(const std::string& api_version, const std::string& kind, const std::string& ns,
            const std::string& name) {
  json made = {{"apiVersion", api_version},
               {"kind", kind},
               {"metadata", {{"name", name}, {"namespace", ns}}}};
  if (ns.empty()) made["metadata"].erase("namespace");
  return made;
}

testing::FakeCluster flux_cluster() {
  testing::FakeCluster cluster;
  cluster.served.insert("kustomize.toolkit.fluxcd.io/v1/Kustomization");
  cluster.served.insert("helm.toolkit.fluxcd.io/v2/HelmRelease");
  cluster.served.insert("/v1/Secret");
  return cluster;
}

const kube::ObjectKey kApps{"kustomize.toolkit.fluxcd.io", "v1", "Kustomization", "flux-system",
                            "apps"};

TEST_CASE("object_tree: each applied object with its state, appliers opened, Secrets not read") {
  testing::FakeCluster cluster = flux_cluster();
  cluster.put(
      applier("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "apps",
              json::array({entry("_apps__Namespace", "v1"), entry("apps_settings__ConfigMap", "v1"),
                           entry("apps_gone__ConfigMap", "v1"), entry("apps_creds__Secret", "v1"),
                           entry("apps_web_apps_Deployment", "v1"),
                           entry("apps_podinfo_helm.toolkit.fluxcd.io_HelmRelease", "v2"),
                           entry("broken entry", "v1")})));
  cluster.put(object("v1", "Namespace", "", "apps"));
  cluster.put(object("v1", "ConfigMap", "apps", "settings"));
  cluster.put(object("v1", "Secret", "apps", "creds"));
  json web = object("apps/v1", "Deployment", "apps", "web");
  web["metadata"]["generation"] = 2;
  web["status"] = {{"observedGeneration", 1}};
  cluster.put(web);
  cluster.put(applier("helm.toolkit.fluxcd.io/v2", "HelmRelease", "apps", "podinfo",
                      json::array({entry("apps_podinfo__Service", "v1")})));
  cluster.put(object("v1", "Service", "apps", "podinfo"));

  TreeNode tree = object_tree(cluster, kApps);
  std::string text = tree_text(tree);
  CHECK(
      text.starts_with("Kustomization/flux-system/apps  Ready\n"
                       "├── Namespace/apps  Ready\n"
                       "├── ConfigMap/apps/settings  Ready\n"
                       "├── ConfigMap/apps/gone  NotFound\n"
                       "├── Secret/apps/creds  NotRead: a Secret: fluxopctl reads none\n"
                       "├── Deployment/apps/web  InProgress: "));
  CHECK(
      text.ends_with("\n└── HelmRelease/apps/podinfo  Ready\n"
                     "    └── Service/apps/podinfo  Ready\n"));
  CHECK(tree_size(tree) == 8);
  CHECK(tree_count(tree, TreeState::ready) == 5);
  // A Secret is named, never asked for.
  CHECK(std::none_of(
      cluster.requests_log.begin(), cluster.requests_log.end(),
      [](const std::string& line) { return line.find("Secret") != std::string::npos; }));

  nlohmann::ordered_json document = tree_json(tree);
  CHECK(document["kind"] == "Kustomization");
  CHECK(document["apiVersion"] == "kustomize.toolkit.fluxcd.io/v1");
  CHECK(document["resources"].size() == 6);
  CHECK(document["resources"][3]["state"] == "NotRead");
  CHECK(document["resources"][5]["resources"][0]["name"] == "podinfo");
  CHECK_FALSE(document["resources"][0].contains("resources"));
}

TEST_CASE("object_tree: a missing root is an error naming it") {
  testing::FakeCluster cluster = flux_cluster();
  CHECK_THROWS_WITH_AS(object_tree(cluster, kApps), "Kustomization/flux-system/apps: not found",
                       Error);
}

TEST_CASE("object_tree: a cycle is cut where it closes, the limit of objects read holds") {
  testing::FakeCluster cluster = flux_cluster();
  cluster.put(applier(
      "kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "apps",
      json::array({entry("flux-system_infra_kustomize.toolkit.fluxcd.io_Kustomization", "v1")})));
  cluster.put(applier(
      "kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "infra",
      json::array({entry("flux-system_apps_kustomize.toolkit.fluxcd.io_Kustomization", "v1"),
                   entry("flux-system_a__ConfigMap", "v1"),
                   entry("flux-system_b__ConfigMap", "v1")})));
  cluster.put(object("v1", "ConfigMap", "flux-system", "a"));
  cluster.put(object("v1", "ConfigMap", "flux-system", "b"));

  TreeNode tree = object_tree(cluster, kApps);
  REQUIRE(tree.children.size() == 1);
  const TreeNode& infra = tree.children[0];
  REQUIRE(infra.children.size() == 3);
  CHECK(infra.children[0].children.empty());
  CHECK(infra.children[0].message == "its inventory is drawn at its other place in this tree");
  CHECK(infra.children[2].state == TreeState::ready);

  TreeNode limited = object_tree(cluster, kApps, 3);
  const TreeNode& cut = limited.children[0].children[2];
  CHECK(cut.state == TreeState::not_read);
  CHECK(cut.message == "beyond the 3 objects read");
}

TEST_CASE("object_tree: an object refused is said on its node, the others read") {
  testing::FakeCluster cluster = flux_cluster();
  cluster.put(applier("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "apps",
                      json::array({entry("apps_web_apps_Deployment", "v1"),
                                   entry("apps_settings__ConfigMap", "v1")})));
  cluster.put(object("v1", "ConfigMap", "apps", "settings"));
  cluster.refuse_list.emplace("apps/v1/Deployment",
                              kube::ApiError("deployments.apps is forbidden", 403, "Forbidden"));
  TreeNode tree = object_tree(cluster, kApps);
  REQUIRE(tree.children.size() == 2);
  CHECK(tree.children[0].state == TreeState::not_read);
  CHECK(tree.children[0].message.find("forbidden") != std::string::npos);
  CHECK(tree.children[1].state == TreeState::ready);
}

TEST_CASE("object_tree: an entry of a version no longer served is read in the served one") {
  testing::FakeCluster cluster = flux_cluster();
  cluster.put(applier(
      "kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "apps",
      json::array(
          {entry("flux-system_infra_kustomize.toolkit.fluxcd.io_Kustomization", "v1beta2")})));
  cluster.put(applier("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "infra",
                      json::array()));
  TreeNode tree = object_tree(cluster, kApps);
  REQUIRE(tree.children.size() == 1);
  CHECK(tree.children[0].state == TreeState::ready);
  CHECK(tree.children[0].ref.version == "v1");
  CHECK(tree.children[0].has_inventory);
}

}  // namespace
}  // namespace fluxop::status
