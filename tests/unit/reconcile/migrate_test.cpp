// The storage-version migration's writes: an empty merge patch for an object
// whose managers are at the storage version, a JSON patch moving those at an
// older one, and storedVersions trimmed only once every object is written.
#include "core/reconcile/migrate.h"

#include <doctest/doctest.h>

#include "../kube/fake_cluster.h"

namespace fluxop::reconcile {
namespace {

using nlohmann::json;
using testing::FakeCluster;

const char* const kCrd = "CustomResourceDefinition/widgets.example.com";

// A Widget CRD storing v1, whose storedVersions still list v1beta1, and two
// Widgets: "new" managed at v1, "old" with a manager at v1beta1.
FakeCluster with_widgets() {
  FakeCluster cluster;
  cluster.served.insert("example.com/v1/Widget");
  cluster.put(
      {{"apiVersion", "apiextensions.k8s.io/v1"},
       {"kind", "CustomResourceDefinition"},
       {"metadata", {{"name", "widgets.example.com"}}},
       {"spec",
        {{"group", "example.com"},
         {"names", {{"kind", "Widget"}, {"plural", "widgets"}}},
         {"versions",
          {{{"name", "v1beta1"}, {"storage", false}}, {{"name", "v1"}, {"storage", true}}}}}},
       {"status", {{"storedVersions", {"v1beta1", "v1"}}}}});
  for (const char* name : {"new", "old"}) {
    cluster.put({{"apiVersion", "example.com/v1"},
                 {"kind", "Widget"},
                 {"metadata", {{"name", name}, {"namespace", "apps"}}},
                 {"spec", {{"size", 1}}}});
  }
  json& old = cluster.objects.at("Widget/apps/old")["metadata"]["managedFields"];
  old.push_back(
      {{"manager", "kubectl"}, {"operation", "Update"}, {"apiVersion", "example.com/v1beta1"}});
  return cluster;
}

std::vector<std::string> migrate(FakeCluster& cluster, bool force) {
  std::vector<std::string> said;
  migrate_resources(cluster, {cluster.objects.at(kCrd)}, force,
                    [&said](const std::string& line) { said.push_back(line); });
  return said;
}

TEST_CASE("migrate: an empty merge patch each, the managers at an older version moved") {
  FakeCluster cluster = with_widgets();
  json before_new = cluster.objects.at("Widget/apps/new");
  std::string old_version = cluster.objects.at("Widget/apps/old")["metadata"]["resourceVersion"];
  CHECK(migrate(cluster, false) ==
        std::vector<std::string>{std::string(kCrd) +
                                 ": migrated 2 objects to v1 (stored versions were "
                                 "[\"v1beta1\",\"v1\"])"});
  CHECK(cluster.patch_batches == 1);
  // The server stores "new" again in v1: as patched, nothing of it changed.
  CHECK(cluster.objects.at("Widget/apps/new") == before_new);
  json old = cluster.objects.at("Widget/apps/old");
  CHECK(old["metadata"]["resourceVersion"] != old_version);
  for (const json& entry : old["metadata"]["managedFields"])
    CHECK(entry["apiVersion"] == "example.com/v1");
  CHECK(old["spec"] == json{{"size", 1}});
  CHECK(cluster.objects.at(kCrd)["status"]["storedVersions"] == json{"v1"});
}

TEST_CASE("migrate: an object moved meanwhile keeps what the other writer wrote") {
  FakeCluster cluster = with_widgets();
  cluster.before_patch = [](json& object) {
    if (object["spec"]["size"] != 1) return;
    object["spec"]["size"] = 2;
    object["metadata"]["resourceVersion"] = "99";
  };
  migrate(cluster, false);
  json old = cluster.objects.at("Widget/apps/old");
  CHECK(old["spec"] == json{{"size", 2}});
  for (const json& entry : old["metadata"]["managedFields"])
    CHECK(entry["apiVersion"] == "example.com/v1");
  CHECK(cluster.logged("GET") == std::vector<std::string>{"Widget/apps/old"});
}

TEST_CASE("migrate: a write refused stops the migration, storedVersions kept for the next") {
  FakeCluster cluster = with_widgets();
  cluster.refuse_patch.emplace("Widget/apps/new",
                               kube::ApiError("Widget/apps/new: forbidden: no", 403, "Forbidden"));
  CHECK_THROWS_WITH_AS(
      migrate(cluster, false),
      (std::string(kCrd) + ": the migration to v1 stopped: 1 object not patched: Widget/apps/new: "
                           "forbidden: no")
          .c_str(),
      Error);
  CHECK(cluster.objects.at(kCrd)["status"]["storedVersions"] == json{"v1beta1", "v1"});
  // "old" was migrated all the same: the batch went whole.
  for (const json& entry : cluster.objects.at("Widget/apps/old")["metadata"]["managedFields"])
    CHECK(entry["apiVersion"] == "example.com/v1");
}

TEST_CASE("migrate: only the CRDs with an older stored version, every one when forced") {
  FakeCluster cluster = with_widgets();
  cluster.objects.at(kCrd)["status"]["storedVersions"] = {"v1"};
  CHECK(migrate(cluster, false).empty());
  CHECK(cluster.patch_batches == 0);
  CHECK(migrate(cluster, true).size() == 1);
  CHECK(cluster.patch_batches == 1);
}

}  // namespace
}  // namespace fluxop::reconcile
