// Thousands of objects patched as their lists are read: a batch per page,
// retried when an object moved, every failure of a batch named together.
#include "core/kube/patch_listed.h"

#include <doctest/doctest.h>

#include "fake_cluster.h"

namespace fluxop::kube {
namespace {

using nlohmann::json;
using testing::FakeCluster;

const ObjectKey kWidgets{"example.com", "v1", "Widget", "", ""};

// `count` Widgets in namespace "apps", each with the finalizer "f".
FakeCluster widgets(int count) {
  FakeCluster cluster;
  cluster.served.insert("example.com/v1/Widget");
  for (int i = 0; i < count; ++i) {
    cluster.put({{"apiVersion", "example.com/v1"},
                 {"kind", "Widget"},
                 {"metadata", {{"name", "w" + std::to_string(i)}, {"namespace", "apps"}}}});
    cluster.objects.at("Widget/apps/w" + std::to_string(i))["metadata"]["finalizers"] = {"f"};
  }
  return cluster;
}

// Removes the first finalizer, after a test that it is still "f".
ListedPatches remove_finalizer() {
  ListedPatches work;
  work.queries = {{kWidgets, {}, ""}};
  work.patch_for = [](std::size_t, const json& object) -> std::optional<ObjectPatch> {
    json finalizers = object["metadata"].value("finalizers", json::array());
    if (finalizers.empty()) return std::nullopt;
    return ObjectPatch{
        object_key(object), ObjectPatch::Type::Json,
        json::array({{{"op", "test"}, {"path", "/metadata/finalizers/0"}, {"value", finalizers[0]}},
                     {{"op", "remove"}, {"path", "/metadata/finalizers/0"}}})};
  };
  return work;
}

TEST_CASE("patch_listed: the objects of a list patched in batches of a page, not one by one") {
  FakeCluster cluster = widgets(1200);
  int batches = 0;
  ListedPatches work = remove_finalizer();
  work.before_batch = [&batches] { ++batches; };
  CHECK(patch_listed(cluster, work) == std::vector<int>{1200});
  CHECK(cluster.patch_batches == 3);  // 500, 500, 200
  CHECK(batches == 3);
  CHECK(cluster.logged("PATCH").size() == 1200);
  for (const auto& [name, object] : cluster.objects) {
    if (name.starts_with("Widget/")) CHECK(object["metadata"]["finalizers"].empty());
  }
  // Nothing left to patch: nothing sent.
  cluster.requests_log.clear();
  CHECK(patch_listed(cluster, work) == std::vector<int>{0});
  CHECK(cluster.logged("PATCH").empty());
}

TEST_CASE("patch_listed: a moved object patched again from it read again, a gone one skipped") {
  FakeCluster cluster = widgets(3);
  // w1's finalizers change before its first patch (another finalizer first).
  bool moved = false;
  cluster.before_patch = [&moved](json& object) {
    if (moved || object["metadata"]["name"] != "w1") return;
    moved = true;
    object["metadata"]["finalizers"] = {"other", "f"};
  };
  cluster.refuse_patch.emplace("Widget/apps/w2", ApiError("gone", 404, "NotFound"));
  CHECK(patch_listed(cluster, remove_finalizer()) == std::vector<int>{2});
  CHECK(cluster.logged("GET") == std::vector<std::string>{"Widget/apps/w1"});
  // The patch made again removed the first finalizer as it was read again.
  CHECK(cluster.objects.at("Widget/apps/w1")["metadata"]["finalizers"] == json{"f"});
}

TEST_CASE("patch_listed: a batch's failures thrown together once the rest is done, no next batch") {
  FakeCluster cluster = widgets(600);
  for (int i : {1, 2, 3, 4, 10, 11, 12}) {
    cluster.refuse_patch.emplace(
        "Widget/apps/w" + std::to_string(i),
        ApiError("Widget/apps/w" + std::to_string(i) + ": forbidden: no", 403, "Forbidden"));
  }
  std::string message;
  try {
    patch_listed(cluster, remove_finalizer());
  } catch (const Error& e) {
    message = e.what();
  }
  // The fake lists by name: w1, w10, w11, w12, w2 named, w3 and w4 counted.
  CHECK(message ==
        "7 objects not patched: Widget/apps/w1: forbidden: no; Widget/apps/w10: forbidden: no; "
        "Widget/apps/w11: forbidden: no; Widget/apps/w12: forbidden: no; Widget/apps/w2: "
        "forbidden: no; and 2 more");
  // The rest of the batch is patched, the next batch (w99 among it) is not.
  CHECK(cluster.patch_batches == 1);
  CHECK(cluster.objects.at("Widget/apps/w0")["metadata"]["finalizers"].empty());
  CHECK(cluster.objects.at("Widget/apps/w99")["metadata"]["finalizers"] == json{"f"});
}

TEST_CASE("patch_one: one object as patch_listed patches each") {
  FakeCluster cluster = widgets(1);
  ListedPatches work = remove_finalizer();
  auto patch_for = [&work](const json& object) { return work.patch_for(0, object); };
  CHECK(patch_one(cluster, cluster.objects.at("Widget/apps/w0"), patch_for));
  CHECK(cluster.objects.at("Widget/apps/w0")["metadata"]["finalizers"].empty());
  // Needing nothing: true, nothing sent.
  cluster.requests_log.clear();
  CHECK(patch_one(cluster, cluster.objects.at("Widget/apps/w0"), patch_for));
  CHECK(cluster.requests_log.empty());
  json gone = cluster.objects.at("Widget/apps/w0");
  gone["metadata"]["finalizers"] = {"f"};
  cluster.objects.erase("Widget/apps/w0");
  CHECK_FALSE(patch_one(cluster, gone, patch_for));
}

}  // namespace
}  // namespace fluxop::kube
