#include "core/reconcile/inventory.h"

#include <doctest/doctest.h>

namespace fluxop::reconcile {
namespace {

using nlohmann::json;

TEST_CASE("inventory: ids and versions as the Flux Operator records them") {
  json deployment = {{"apiVersion", "apps/v1"},
                     {"kind", "Deployment"},
                     {"metadata", {{"name", "source-controller"}, {"namespace", "flux-system"}}}};
  json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
              {"kind", "CustomResourceDefinition"},
              {"metadata", {{"name", "gitrepositories.source.toolkit.fluxcd.io"}}}};
  json account = {{"apiVersion", "v1"},
                  {"kind", "ServiceAccount"},
                  {"metadata", {{"name", "source-controller"}, {"namespace", "flux-system"}}}};
  std::vector<kube::ObjectKey> refs = {kube::object_key(deployment), kube::object_key(crd),
                                       kube::object_key(account)};
  CHECK(inventory_id(refs[0]) == "flux-system_source-controller_apps_Deployment");
  CHECK(inventory_id(refs[1]) ==
        "_gitrepositories.source.toolkit.fluxcd.io_apiextensions.k8s.io_CustomResourceDefinition");
  CHECK(inventory_id(refs[2]) == "flux-system_source-controller__ServiceAccount");
  CHECK(display_name(refs[0]) == "Deployment/flux-system/source-controller");
  CHECK(display_name(refs[1]) ==
        "CustomResourceDefinition/gitrepositories.source.toolkit.fluxcd.io");

  json inventory = inventory_json(refs);
  CHECK(inventory["entries"][0] ==
        json{{"id", "flux-system_source-controller_apps_Deployment"}, {"v", "v1"}});
  CHECK(inventory["entries"][2]["v"] == "v1");
  CHECK(read_inventory(inventory) == refs);
}

TEST_CASE("inventory: malformed entries are skipped") {
  json inventory = {{"entries",
                     {{{"id", "ns_name_apps_Deployment"}, {"v", "v1"}},
                      {{"id", "too_many_parts_here_x"}, {"v", "v1"}},
                      {{"id", "ns__apps_Deployment"}, {"v", "v1"}},
                      {{"v", "v1"}},
                      "not an object"}}};
  std::vector<kube::ObjectKey> refs = read_inventory(inventory);
  REQUIRE(refs.size() == 1);
  CHECK(refs[0] == kube::ObjectKey{"apps", "v1", "Deployment", "ns", "name"});
  CHECK(read_inventory(json()).empty());
  CHECK(read_inventory(json{{"entries", "x"}}).empty());
}

TEST_CASE("inventory: stale objects are compared by id, not version") {
  std::vector<kube::ObjectKey> previous = {
      {"apps", "v1", "Deployment", "flux-system", "helm-controller"},
      {"source.toolkit.fluxcd.io", "v1beta2", "GitRepository", "flux-system", "flux-system"},
      {"", "v1", "Namespace", "", "flux-system"}};
  std::vector<kube::ObjectKey> current = {
      {"source.toolkit.fluxcd.io", "v1", "GitRepository", "flux-system", "flux-system"},
      {"", "v1", "Namespace", "", "flux-system"}};
  std::vector<kube::ObjectKey> stale = stale_objects(previous, current);
  REQUIRE(stale.size() == 1);
  CHECK(stale[0].name == "helm-controller");
}

}  // namespace
}  // namespace fluxop::reconcile
