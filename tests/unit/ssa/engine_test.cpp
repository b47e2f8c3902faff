#include "core/ssa/engine.h"

#include <doctest/doctest.h>

#include "core/error.h"
#include "core/ssa/errors.h"
#include "fake_cluster.h"

namespace fluxop::ssa {
namespace {

using nlohmann::json;
using testing::FakeCluster;

const auto kLater = std::chrono::steady_clock::now() + std::chrono::seconds(30);

json config_map(const std::string& name, const std::string& value = "a") {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", "flux-system"}}},
          {"data", {{"key", value}}}};
}

json namespace_object(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
}

json crd(const std::string& name) {
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", name}}},
          {"spec", {{"group", "example.com"}}}};
}

kube::ApiError invalid(std::vector<kube::StatusCause> causes) {
  return kube::ApiError("ConfigMap/flux-system/cm: invalid", 422, "Invalid", std::move(causes));
}

TEST_CASE("engine: the plan comes from a server-side dry run against the live object") {
  FakeCluster cluster;
  cluster.put(namespace_object("flux-system"));
  Engine engine(cluster);

  PlannedChange created = engine.plan(config_map("new"));
  CHECK(created.action == Action::Created);
  CHECK(created.live.is_null());
  CHECK(created.merged["metadata"]["resourceVersion"] == "1");

  cluster.put(config_map("same"));
  CHECK(engine.plan(config_map("same")).action == Action::Unchanged);
  PlannedChange changed = engine.plan(config_map("same", "b"));
  CHECK(changed.action == Action::Configured);
  CHECK(changed.live["data"]["key"] == "a");
  CHECK(changed.merged["data"]["key"] == "b");
  CHECK(cluster.logged("APPLY").empty());
  CHECK(cluster.logged("DRY-RUN").size() == 3);
}

TEST_CASE("engine: what the server cannot place yet is planned as created, without a dry run") {
  FakeCluster cluster(/*dry_run=*/true);
  Engine engine(cluster);
  json unknown = {{"apiVersion", "example.com/v1"},
                  {"kind", "Widget"},
                  {"metadata", {{"name", "w"}, {"namespace", "flux-system"}}}};
  CHECK(engine.plan(unknown).action == Action::Created);
  CHECK(engine.plan(config_map("cm")).action == Action::Created);  // no namespace yet
  CHECK(engine.plan(config_map("cm")).merged == config_map("cm"));
  CHECK(cluster.logged("DRY-RUN").empty());
  CHECK(cluster.logged("GET") == std::vector<std::string>{"ConfigMap/flux-system/cm",
                                                          "Namespace/flux-system",
                                                          "ConfigMap/flux-system/cm"});
}

TEST_CASE("engine: apply follows the plan, writing only what changes") {
  FakeCluster cluster;
  cluster.put(namespace_object("flux-system"));
  cluster.put(config_map("same"));
  cluster.put(config_map("old"));
  Engine engine(cluster);
  CHECK(engine.apply(config_map("same")).action == Action::Unchanged);
  CHECK(engine.apply(config_map("old", "b")).action == Action::Configured);
  CHECK(engine.apply(config_map("new")).action == Action::Created);
  CHECK(cluster.logged("APPLY") ==
        std::vector<std::string>{"ConfigMap/flux-system/old", "ConfigMap/flux-system/new"});
  CHECK(cluster.objects.at("ConfigMap/flux-system/old")["data"]["key"] == "b");
}

TEST_CASE("engine: a dry-run cluster is planned, never written") {
  FakeCluster cluster(/*dry_run=*/true);
  cluster.put(namespace_object("flux-system"));
  cluster.put(config_map("old"));
  Engine engine(cluster);
  CHECK(engine.apply(config_map("old", "b")).action == Action::Configured);
  CHECK(engine.apply(config_map("new")).action == Action::Created);
  CHECK(cluster.logged("APPLY").empty());
  CHECK(cluster.objects.at("ConfigMap/flux-system/old")["data"]["key"] == "a");
}

TEST_CASE("engine: objects of other managers are taken over before the apply") {
  FakeCluster cluster;
  cluster.put(namespace_object("flux-system"));
  json theirs = config_map("cm");
  theirs["metadata"]["annotations"] = {{"kubectl.kubernetes.io/last-applied-configuration", "{}"}};
  theirs["metadata"]["managedFields"] = json::array({{{"manager", "kubectl"}}});
  cluster.put(theirs);
  std::vector<std::string> lines;
  Engine engine(cluster, {.on_progress = [&](const std::string& line) { lines.push_back(line); }});
  // Same content, other owners: a change of ownership still to make.
  json ours = config_map("cm");
  ours["metadata"]["annotations"] = json::object();
  CHECK(engine.plan(ours).action == Action::Configured);
  CHECK(engine.apply(ours).action == Action::Configured);
  CHECK(cluster.logged("PATCH") == std::vector<std::string>{"ConfigMap/flux-system/cm"});
  CHECK(lines == std::vector<std::string>{"ConfigMap/flux-system/cm: taken over from its "
                                          "previous managers"});
  const json& live = cluster.objects.at("ConfigMap/flux-system/cm");
  CHECK(live["metadata"]["managedFields"][0].value("manager", "") == "flux-operator");
}

TEST_CASE("engine: an immutable field, as the Status causes say it, means recreate") {
  FakeCluster cluster;
  cluster.put(namespace_object("flux-system"));
  cluster.put(config_map("cm"));
  cluster.refuse_apply.emplace(
      "ConfigMap/flux-system/cm",
      invalid({{"FieldValueInvalid", "Invalid value: \"b\": field is immutable", "data"}}));
  Engine engine(cluster);
  PlannedChange planned = engine.plan(config_map("cm", "b"));
  CHECK(planned.action == Action::Replaced);
  CHECK(planned.live["data"]["key"] == "a");

  // A CEL rule's message; the fake lets the recreated object through.
  cluster.refuse_apply.clear();
  cluster.refuse_apply.emplace(
      "ConfigMap/flux-system/cm",
      invalid({{"FieldValueInvalid", "Invalid value: \"object\": data is immutable", "data"}}));
  CHECK(engine.apply(config_map("cm", "b")).action == Action::Replaced);
  CHECK(cluster.logged("DELETE") == std::vector<std::string>{"ConfigMap/flux-system/cm"});
  CHECK(cluster.objects.at("ConfigMap/flux-system/cm")["data"]["key"] == "b");
}

TEST_CASE("engine: other refusals are errors, never a recreate") {
  FakeCluster cluster;
  cluster.put(namespace_object("flux-system"));
  cluster.put(config_map("cm"));
  // The word alone, without a cause saying it, is not the class.
  cluster.refuse_apply.emplace("ConfigMap/flux-system/cm",
                               kube::ApiError("the field is immutable", 422, "Invalid", {}));
  Engine engine(cluster);
  CHECK_THROWS_WITH_AS(engine.apply(config_map("cm", "b")), "the field is immutable",
                       kube::ApiError);
  CHECK(cluster.logged("DELETE").empty());
}

TEST_CASE("errors: immutable fields are told by status, reason and cause") {
  struct Case {
    long status;
    std::string reason;
    kube::StatusCause cause;
    bool immutable;
  };
  const Case cases[] = {
      {422, "Invalid", {"FieldValueInvalid", "Invalid value: x: field is immutable", "spec"}, true},
      {422,
       "Invalid",
       {"FieldValueInvalid", "Invalid value: \"object\": name is immutable", ""},
       true},
      {422, "Invalid", {"FieldValueForbidden", "Forbidden: field is immutable", "spec"}, true},
      {422, "Invalid", {"FieldValueRequired", "Required value", "spec.x"}, false},
      {422, "Invalid", {"FieldValueInvalid", "Invalid value: must be positive", "spec"}, false},
      {409, "Conflict", {"FieldValueInvalid", "field is immutable", ""}, false},
      {403, "Forbidden", {"FieldValueInvalid", "field is immutable", ""}, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.cause.message);
    CHECK(is_immutable_field(kube::ApiError("x", c.status, c.reason, {c.cause})) == c.immutable);
  }
}

TEST_CASE("engine: CRDs and Namespaces first, established, then discovery, then the rest") {
  FakeCluster cluster;
  cluster.served.erase("example.com/v1/Widget");
  Engine engine(cluster);
  json widget = {{"apiVersion", "example.com/v1"},
                 {"kind", "Widget"},
                 {"metadata", {{"name", "w"}, {"namespace", "flux-system"}}}};
  std::vector<Change> seen;
  std::vector<Change> changes = engine.apply_staged(
      {config_map("cm"), crd("widgets.example.com"), widget, namespace_object("flux-system")},
      kLater, [&](const Change& change) { seen.push_back(change); });
  REQUIRE(changes.size() == 4);
  CHECK(changes[0].ref.kind == "CustomResourceDefinition");
  CHECK(changes[1].ref.kind == "Namespace");
  CHECK(changes[2].ref.kind == "ConfigMap");
  CHECK(changes[3].ref.kind == "Widget");
  CHECK(seen.size() == 4);
  auto at = [&](const std::string& line) {
    return std::find(cluster.requests_log.begin(), cluster.requests_log.end(), line) -
           cluster.requests_log.begin();
  };
  // The CRD is read back (established) and discovery refreshed before the rest.
  CHECK(at("REFRESH") > at("APPLY CustomResourceDefinition/widgets.example.com"));
  CHECK(at("REFRESH") < at("APPLY ConfigMap/flux-system/cm"));
  CHECK(cluster.kind_refreshes == 1);
}

TEST_CASE("engine: prune deletes only what the owner labels and no annotation keeps") {
  FakeCluster cluster;
  Owner owner = {{"fluxcd.controlplane.io/name", "flux"},
                 {"fluxcd.controlplane.io/namespace", "flux-system"}};
  auto owned = [&](const std::string& name) {
    json object = config_map(name);
    object["metadata"]["labels"] = owner;
    return object;
  };
  cluster.put(owned("owned"));
  cluster.put(config_map("foreign"));
  json kept = owned("kept");
  kept["metadata"]["annotations"] = {{"fluxcd.controlplane.io/prune", "Disabled"}};
  cluster.put(kept);
  std::vector<ObjectKey> stale;
  for (const char* name : {"owned", "foreign", "kept", "gone"}) {
    stale.push_back({"", "v1", "ConfigMap", "flux-system", name});
  }
  Engine engine(cluster);
  std::vector<PlannedPrune> planned = engine.plan_prune(stale, owner);
  REQUIRE(planned.size() == 4);
  // In reverse order of the apply.
  CHECK(planned[0].key.name == "gone");
  CHECK(planned[0].action == PruneAction::Gone);
  CHECK(planned[1].action == PruneAction::Keep);
  CHECK(planned[2].action == PruneAction::Keep);
  CHECK(planned[3].action == PruneAction::Delete);

  std::vector<Change> changes = engine.prune(stale, owner, nullptr);
  REQUIRE(changes.size() == 3);
  CHECK(changes[0].action == Action::Skipped);
  CHECK(changes[1].action == Action::Skipped);
  CHECK(changes[2].action == Action::Deleted);
  CHECK(cluster.logged("DELETE") == std::vector<std::string>{"ConfigMap/flux-system/owned"});
  CHECK(cluster.objects.contains("ConfigMap/flux-system/kept"));
}

TEST_CASE("engine: the wait ends at once on a failed object, and at the deadline") {
  FakeCluster cluster;
  json deployment = {{"apiVersion", "apps/v1"},
                     {"kind", "Deployment"},
                     {"metadata", {{"name", "d"}, {"namespace", "flux-system"}, {"generation", 1}}},
                     {"spec", {{"replicas", 1}}}};
  json failed = deployment;
  failed["status"] = {{"observedGeneration", 1},
                      {"conditions", json::array({{{"type", "Progressing"},
                                                   {"status", "False"},
                                                   {"reason", "ProgressDeadlineExceeded"},
                                                   {"message", "too slow"}}})}};
  cluster.put(failed);
  Engine engine(cluster);
  CHECK_THROWS_WITH_AS(engine.wait({deployment}, "the components", kLater),
                       doctest::Contains("Deployment/flux-system/d"), Error);

  cluster.put(deployment);  // no status yet: never ready
  CHECK_THROWS_WITH_AS(
      engine.wait({deployment}, "the components", std::chrono::steady_clock::now()),
      doctest::Contains("timeout waiting for Deployment/flux-system/d"), Error);
  CHECK_NOTHROW(engine.wait({config_map("cm")}, "nothing to wait for", kLater));

  cluster.objects.clear();  // deleted during the wait: no need to wait for the deadline
  CHECK_THROWS_WITH_AS(engine.wait({deployment}, "the components", kLater),
                       "Deployment/flux-system/d: deleted while waiting", Error);
}

TEST_CASE("engine: the hook before each request can stop it") {
  FakeCluster cluster;
  cluster.put(namespace_object("flux-system"));
  int calls = 0;
  Engine engine(cluster, {.before_request = [&] {
                  if (++calls > 1) throw Error("interrupted");
                }});
  CHECK_THROWS_WITH_AS(engine.apply(config_map("cm")), "interrupted", Error);
  CHECK(cluster.logged("APPLY").empty());
}

}  // namespace
}  // namespace fluxop::ssa
