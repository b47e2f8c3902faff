#include "core/ssa/engine.h"

#include <doctest/doctest.h>

#include "../kube/fake_cluster.h"
#include "../recording_wait_status.h"
#include "core/error.h"
#include "core/ssa/errors.h"

namespace fluxop::ssa {
namespace {

using nlohmann::json;
using testing::FakeCluster;

// A deadline no test reaches, taken when the test runs (the suite takes longer).
std::chrono::steady_clock::time_point later() {
  return std::chrono::steady_clock::now() + std::chrono::seconds(30);
}

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

// A custom resource and the CRD that defines its kind.
json widget_object() {
  return {{"apiVersion", "example.com/v1"},
          {"kind", "Widget"},
          {"metadata", {{"name", "w"}, {"namespace", "flux-system"}}}};
}
json widgets_crd() {
  json widgets = crd("widgets.example.com");
  widgets["spec"]["names"] = {{"kind", "Widget"}};
  return widgets;
}

PlannedChange plan_one(Engine& engine, const json& object) { return engine.plan({object}).front(); }

Change apply_one(Engine& engine, const json& object) {
  return engine.apply({object}, engine.read_live({object}), nullptr).front().change;
}

std::vector<Applied> apply_staged(Engine& engine, const std::vector<json>& objects,
                                  std::chrono::steady_clock::time_point deadline,
                                  const std::function<void(const Change&)>& on_change = nullptr) {
  return engine.apply_staged(objects, engine.read_live(objects), deadline, on_change);
}

kube::ApiError invalid(std::vector<kube::StatusCause> causes) {
  return kube::ApiError("ConfigMap/flux-system/cm: invalid", 422, "Invalid", std::move(causes));
}

TEST_CASE("engine: the plan comes from a server-side dry run against the live object") {
  FakeCluster cluster;
  cluster.put(namespace_object("flux-system"));
  Engine engine(cluster);

  PlannedChange created = plan_one(engine, config_map("new"));
  CHECK(created.action == Action::Created);
  CHECK(created.live.is_null());
  CHECK(created.merged["metadata"]["resourceVersion"] == "1");

  cluster.put(config_map("same"));
  PlannedChange changed = plan_one(engine, config_map("same", "b"));
  CHECK(changed.action == Action::Configured);
  CHECK(changed.live["data"]["key"] == "a");
  CHECK(changed.merged["data"]["key"] == "b");
  CHECK(cluster.logged("APPLY").empty());
  CHECK(cluster.logged("DRY-RUN").size() == 2);

  // What this manager applied as it is: unchanged, from the live object alone.
  PlannedChange same = plan_one(engine, config_map("same"));
  CHECK(same.action == Action::Unchanged);
  CHECK(same.merged == cluster.objects.at("ConfigMap/flux-system/same"));
  CHECK(cluster.logged("DRY-RUN").size() == 2);
  // Owned by another manager: the server decides.
  cluster.objects.at("ConfigMap/flux-system/same")["metadata"]["managedFields"][0]["manager"] =
      "kubectl";
  CHECK(plan_one(engine, config_map("same")).action == Action::Configured);
  CHECK(cluster.logged("DRY-RUN").size() == 3);
}

TEST_CASE("engine: what the server cannot place yet is planned as created, without a dry run") {
  FakeCluster cluster(/*dry_run=*/true);
  Engine engine(cluster);
  json unknown = {{"apiVersion", "example.com/v1"},
                  {"kind", "Widget"},
                  {"metadata", {{"name", "w"}, {"namespace", "flux-system"}}}};
  CHECK(plan_one(engine, unknown).action == Action::Created);
  CHECK(plan_one(engine, config_map("cm")).action == Action::Created);  // no namespace yet
  CHECK(plan_one(engine, config_map("cm")).merged == config_map("cm"));
  CHECK(cluster.logged("DRY-RUN").empty());
  CHECK(cluster.logged("LIST") ==
        std::vector<std::string>{"ConfigMap/flux-system/cm", "ConfigMap/flux-system/cm"});
  CHECK(cluster.logged("GET") == std::vector<std::string>{"Namespace/flux-system"});
}

TEST_CASE("engine: apply follows the plan, writing only what changes") {
  FakeCluster cluster;
  cluster.put(namespace_object("flux-system"));
  cluster.put(config_map("same"));
  cluster.put(config_map("old"));
  Engine engine(cluster);
  CHECK(apply_one(engine, config_map("same")).action == Action::Unchanged);
  CHECK(apply_one(engine, config_map("old", "b")).action == Action::Configured);
  CHECK(apply_one(engine, config_map("new")).action == Action::Created);
  CHECK(cluster.logged("APPLY") ==
        std::vector<std::string>{"ConfigMap/flux-system/old", "ConfigMap/flux-system/new"});
  CHECK(cluster.objects.at("ConfigMap/flux-system/old")["data"]["key"] == "b");
}

TEST_CASE("engine: a dry-run cluster is planned, never written") {
  FakeCluster cluster(/*dry_run=*/true);
  cluster.put(namespace_object("flux-system"));
  cluster.put(config_map("old"));
  Engine engine(cluster);
  CHECK(apply_one(engine, config_map("old", "b")).action == Action::Configured);
  CHECK(apply_one(engine, config_map("new")).action == Action::Created);
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
  CHECK(plan_one(engine, ours).action == Action::Configured);
  CHECK(apply_one(engine, ours).action == Action::Configured);
  CHECK(cluster.logged("PATCH") == std::vector<std::string>{"ConfigMap/flux-system/cm"});
  CHECK(lines == std::vector<std::string>{"ConfigMap/flux-system/cm: taken over from its "
                                          "previous managers"});
  const json& live = cluster.objects.at("ConfigMap/flux-system/cm");
  CHECK(live["metadata"]["managedFields"][0].value("manager", "") == "flux-operator");
}

// A ConfigMap kubectl applied, to be taken over by fluxopctl's apply.
void put_kubectl_config_map(FakeCluster& cluster) {
  cluster.put(namespace_object("flux-system"));
  json theirs = config_map("cm");
  theirs["metadata"]["managedFields"] = json::array({{{"manager", "kubectl-edit"}}});
  cluster.put(theirs);
}

// Another writer in between: a status write moves the object's version
// and its own managed fields entry.
void write_status(json& object) {
  json& generation = object["status"]["observedGeneration"];
  generation = generation.is_number() ? generation.get<int>() + 1 : 1;
  object["metadata"]["resourceVersion"] =
      std::to_string(std::stoll(object["metadata"].value("resourceVersion", "0")) + 1);
}

// Another manager's first write in between: an entry of its own, sorted
// before the others, moves theirs.
void write_as_another_manager(json& object) {
  json& entries = object["metadata"]["managedFields"];
  entries.insert(entries.begin(),
                 {{"manager", "other-" + std::to_string(entries.size())}, {"operation", "Update"}});
  write_status(object);
}

bool owned_by_us(const FakeCluster& cluster) {
  for (const json& entry :
       cluster.objects.at("ConfigMap/flux-system/cm")["metadata"]["managedFields"]) {
    std::string manager = entry.value("manager", "");
    if (manager != "flux-operator" && !manager.starts_with("other-")) return false;
  }
  return true;
}

TEST_CASE("engine: a take-over holds through status writes in between, and keeps them") {
  FakeCluster cluster;
  put_kubectl_config_map(cluster);
  cluster.before_patch = write_status;
  Engine engine(cluster);
  CHECK(apply_one(engine, config_map("cm", "b")).action == Action::Configured);
  CHECK(cluster.logged("PATCH").size() == 1);
  CHECK(owned_by_us(cluster));
  CHECK(cluster.objects.at("ConfigMap/flux-system/cm")["data"]["key"] == "b");
  CHECK(cluster.objects.at("ConfigMap/flux-system/cm")["status"]["observedGeneration"] == 1);
}

TEST_CASE("engine: a take-over is made again from a fresh read when the entries moved") {
  FakeCluster cluster;
  put_kubectl_config_map(cluster);
  int moves = 3;
  cluster.before_patch = [&](json& object) {
    if (moves-- > 0) write_as_another_manager(object);
  };
  Engine engine(cluster);
  CHECK(apply_one(engine, config_map("cm", "b")).action == Action::Configured);
  CHECK(cluster.logged("PATCH").size() == 4);
  CHECK(owned_by_us(cluster));
  CHECK(cluster.objects.at("ConfigMap/flux-system/cm")["data"]["key"] == "b");
}

TEST_CASE("engine: a take-over sent again after a lost answer finds it done") {
  FakeCluster cluster;
  put_kubectl_config_map(cluster);
  cluster.lost_patch_responses = 1;
  Engine engine(cluster);
  CHECK(apply_one(engine, config_map("cm", "b")).action == Action::Configured);
  CHECK(owned_by_us(cluster));
  CHECK(cluster.objects.at("ConfigMap/flux-system/cm")["data"]["key"] == "b");
}

TEST_CASE("engine: an object that moves under every take-over is an error saying so") {
  FakeCluster cluster;
  put_kubectl_config_map(cluster);
  cluster.before_patch = write_as_another_manager;
  Engine engine(cluster);
  CHECK_THROWS_WITH_AS(apply_one(engine, config_map("cm", "b")),
                       "ConfigMap/flux-system/cm: cannot take it over from its previous "
                       "managers: it changed under each of 8 tries",
                       Error);
  CHECK(cluster.logged("PATCH").size() == 8);
  CHECK(cluster.logged("APPLY").empty());
}

TEST_CASE("engine: a take-over refused with the object unchanged is that refusal") {
  FakeCluster cluster;
  put_kubectl_config_map(cluster);
  // Invalid for another reason: the object has not moved.
  cluster.before_patch = [](json&) { throw kube::ApiError("refused", 422, "Invalid"); };
  Engine engine(cluster);
  CHECK_THROWS_AS(apply_one(engine, config_map("cm", "b")), kube::ApiError);
  CHECK(cluster.logged("PATCH").size() == 1);
}

TEST_CASE("engine: an immutable field, as the Status causes say it, means recreate") {
  FakeCluster cluster;
  cluster.put(namespace_object("flux-system"));
  cluster.put(config_map("cm"));
  cluster.refuse_apply.emplace(
      "ConfigMap/flux-system/cm",
      invalid({{"FieldValueInvalid", "Invalid value: \"b\": field is immutable", "data"}}));
  Engine engine(cluster);
  PlannedChange planned = plan_one(engine, config_map("cm", "b"));
  CHECK(planned.action == Action::Replaced);
  CHECK(planned.live["data"]["key"] == "a");
  CHECK(cluster.logged("DELETE").empty());

  // A CEL rule's message; the fake lets the recreated object through.
  cluster.refuse_apply.clear();
  cluster.refuse_apply.emplace(
      "ConfigMap/flux-system/cm",
      invalid({{"FieldValueInvalid", "Invalid value: \"object\": data is immutable", "data"}}));
  CHECK(apply_one(engine, config_map("cm", "b")).action == Action::Replaced);
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
  CHECK_THROWS_WITH_AS(apply_one(engine, config_map("cm", "b")), "the field is immutable",
                       kube::ApiError);
  CHECK(cluster.logged("DELETE").empty());
}

TEST_CASE("errors: not allowed is unauthenticated or forbidden, nothing else") {
  CHECK(is_not_allowed(kube::ApiError("x", 401, "Unauthorized")));
  CHECK(is_not_allowed(kube::ApiError("x", 403, "Forbidden")));
  for (long status : {400L, 404L, 409L, 422L, 429L, 500L}) {
    CAPTURE(status);
    CHECK_FALSE(is_not_allowed(kube::ApiError("x", status, "")));
  }
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
  Engine engine(cluster);
  json widget = widget_object();
  json widgets = widgets_crd();
  // The fake serves the kind once discovery is refreshed after the CRD.
  cluster.on_refresh = [&] { cluster.served.insert("example.com/v1/Widget"); };
  std::vector<Change> seen;
  std::vector<Applied> applied =
      apply_staged(engine, {config_map("cm"), widgets, widget, namespace_object("flux-system")},
                   later(), [&](const Change& change) { seen.push_back(change); });
  REQUIRE(applied.size() == 4);
  CHECK(applied[0].change.ref.kind == "CustomResourceDefinition");
  CHECK(applied[1].change.ref.kind == "Namespace");
  CHECK(applied[2].change.ref.kind == "ConfigMap");
  CHECK(applied[3].change.ref.kind == "Widget");
  CHECK(applied[3].change.action == Action::Created);
  CHECK(seen.size() == 4);
  auto at = [&](const std::string& line) {
    return std::find(cluster.requests_log.begin(), cluster.requests_log.end(), line) -
           cluster.requests_log.begin();
  };
  // Established (the fake's apply answers so), discovery refreshed before the rest.
  CHECK(at("REFRESH") > at("APPLY CustomResourceDefinition/widgets.example.com"));
  CHECK(at("REFRESH") < at("APPLY ConfigMap/flux-system/cm"));
  CHECK(cluster.kind_refreshes == 1);
  // Read first, all together; the Widget's kind was not served yet.
  CHECK(cluster.logged("LIST") ==
        std::vector<std::string>{"ConfigMap/flux-system/cm", "Namespace/flux-system",
                                 "CustomResourceDefinition/widgets.example.com"});
}

TEST_CASE("engine: CRDs the rest does not use are not waited for, nor is discovery refreshed") {
  FakeCluster cluster;
  cluster.put(namespace_object("flux-system"));
  cluster.establish = false;  // a CRD never established
  Engine engine(cluster);
  std::vector<Applied> applied = apply_staged(
      engine, {crd("widgets.example.com"), config_map("cm")}, std::chrono::steady_clock::now());
  REQUIRE(applied.size() == 2);
  CHECK(applied[1].change.action == Action::Created);
  CHECK(cluster.kind_refreshes == 0);

  // One the rest uses: the wait ends at the deadline, naming it.
  json widget = widget_object();
  json widgets = widgets_crd();
  CHECK_THROWS_WITH_AS(
      apply_staged(engine, {widgets, widget}, std::chrono::steady_clock::now()),
      doctest::Contains("timeout waiting for CustomResourceDefinition/widgets.example.com"), Error);
}

TEST_CASE("engine: a CRD not established within seconds is written again, changing nothing") {
  FakeCluster cluster;
  cluster.establish = false;  // lost from the API server's queue
  std::vector<std::string> progress;
  Engine engine(cluster,
                {.on_progress = [&](const std::string& line) { progress.push_back(line); }});
  json applied = cluster.apply(crd("widgets.example.com"));
  int writes = 0;
  // The write queues it again: the server establishes it.
  cluster.before_patch = [&](json& object) {
    if (++writes == 2)
      object["status"]["conditions"] = json::array({{{"type", "Established"}, {"status", "True"}}});
  };
  engine.wait({applied}, "CRDs to be established", later());
  CHECK(writes == 2);
  const json& now = cluster.objects.at("CustomResourceDefinition/widgets.example.com");
  CHECK_FALSE(now["metadata"].contains("annotations"));
  CHECK(std::find(progress.begin(), progress.end(),
                  "CustomResourceDefinition/widgets.example.com is not established after 5s (not "
                  "yet established): written again to requeue it") != progress.end());
}

TEST_CASE("engine: an established CRD's kind is waited for until discovery serves it") {
  FakeCluster cluster;
  cluster.put(namespace_object("flux-system"));
  Engine engine(cluster);
  json widget = widget_object();
  json widgets = widgets_crd();
  widgets["spec"]["versions"] = {{{"name", "v1"}, {"served", true}},
                                 {{"name", "v1alpha1"}, {"served", false}}};
  // The API server lists the kind in discovery a while after Established.
  int refreshes_to_serve = 3;
  cluster.on_refresh = [&] {
    if (--refreshes_to_serve == 0) cluster.served.insert("example.com/v1/Widget");
  };
  std::vector<Applied> applied = apply_staged(engine, {widgets, widget}, later());
  REQUIRE(applied.size() == 2);
  CHECK(applied[1].change.ref.kind == "Widget");
  CHECK(applied[1].change.action == Action::Created);
  CHECK(cluster.kind_refreshes == 3);

  // Never served: the wait ends at the deadline, naming the kind.
  FakeCluster never;
  never.put(namespace_object("flux-system"));
  Engine waiting(never);
  json gadgets = widgets;
  gadgets["metadata"]["name"] = "gadgets.example.com";
  gadgets["spec"]["names"] = {{"kind", "Gadget"}};
  json gadget = widget;
  gadget["kind"] = "Gadget";
  CHECK_THROWS_WITH_AS(
      apply_staged(waiting, {gadgets, gadget},
                   std::chrono::steady_clock::now() + std::chrono::milliseconds(200)),
      "timeout waiting for CRDs to be established: discovery does not serve example.com/v1 Gadget",
      Error);
}

TEST_CASE("engine: live objects are read with one LIST per kind, by the owner's labels") {
  FakeCluster cluster;
  cluster.put(namespace_object("flux-system"));
  Labels owner = {{"owner", "me"}};
  std::vector<json> objects;
  for (const char* name : {"a", "b", "c"}) {
    json object = config_map(name);
    object["metadata"]["labels"] = owner;
    objects.push_back(object);
  }
  cluster.put(objects[0]);
  cluster.put(objects[1]);
  json unlabelled = config_map("c");  // there, without the owner's labels
  cluster.put(unlabelled);
  Engine engine(cluster, {}, owner);
  std::vector<Live> live = engine.read_live(objects);
  REQUIRE(live.size() == 3);
  CHECK(live[0]);
  CHECK(live[1]);
  REQUIRE(live[2]);
  CHECK(live[2]->at("metadata").value("labels", json()).is_null());
  // The list, then the one it did not show, by name.
  CHECK(cluster.logged("LIST") ==
        std::vector<std::string>{"ConfigMap/flux-system/", "ConfigMap/flux-system/c"});

  // Applied as they are: nothing written, no dry run.
  cluster.requests_log.clear();
  std::vector<Applied> applied = engine.apply(objects, live, nullptr);
  CHECK(applied[0].change.action == Action::Unchanged);
  CHECK(applied[1].change.action == Action::Unchanged);
  CHECK(applied[2].change.action == Action::Configured);  // its labels
  CHECK(cluster.logged("APPLY") == std::vector<std::string>{"ConfigMap/flux-system/c"});
  CHECK(cluster.logged("DRY-RUN").empty());

  // In a namespace it created, until it applies something there, nothing is read.
  cluster.requests_log.clear();
  apply_one(engine, namespace_object("new"));
  json fresh = config_map("fresh");
  fresh["metadata"]["namespace"] = "new";
  cluster.requests_log.clear();
  CHECK_FALSE(engine.read_live({fresh})[0]);
  CHECK(cluster.requests_log.empty());
  engine.apply({fresh}, {std::nullopt}, nullptr);
  CHECK(engine.read_live({fresh})[0]);
}

TEST_CASE("engine: prune deletes only what the owner labels and no label or annotation keeps") {
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
  // As fluxcd/pkg's ssa excludes it: the label keeps it too.
  json labelled = owned("labelled");
  labelled["metadata"]["labels"]["fluxcd.controlplane.io/prune"] = "disabled";
  cluster.put(labelled);
  std::vector<ObjectKey> stale;
  for (const char* name : {"owned", "foreign", "kept", "labelled", "gone"}) {
    stale.push_back({"", "v1", "ConfigMap", "flux-system", name});
  }
  Engine engine(cluster);
  std::vector<PlannedPrune> planned = engine.plan_prune(stale, owner);
  REQUIRE(planned.size() == 5);
  // In reverse order of the apply.
  CHECK(planned[0].key.name == "gone");
  CHECK(planned[0].action == PruneAction::Gone);
  CHECK(planned[1].action == PruneAction::Keep);
  CHECK(planned[2].action == PruneAction::Keep);
  CHECK(planned[3].action == PruneAction::Keep);
  CHECK(planned[4].action == PruneAction::Delete);

  std::vector<Change> changes = engine.prune(stale, owner, nullptr);
  REQUIRE(changes.size() == 4);
  CHECK(changes[0].action == Action::Skipped);
  CHECK(changes[1].action == Action::Skipped);
  CHECK(changes[2].action == Action::Skipped);
  CHECK(changes[3].action == Action::Deleted);
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
  CHECK_THROWS_WITH_AS(engine.wait({deployment}, "the components", later()),
                       doctest::Contains("Deployment/flux-system/d"), Error);

  cluster.put(deployment);  // no status yet: never ready
  CHECK_THROWS_WITH_AS(
      engine.wait({deployment}, "the components", std::chrono::steady_clock::now()),
      doctest::Contains("timeout waiting for Deployment/flux-system/d"), Error);
  CHECK_NOTHROW(engine.wait({config_map("cm")}, "nothing to wait for", later()));

  cluster.objects.clear();  // deleted during the wait: no need to wait for the deadline
  CHECK_THROWS_WITH_AS(engine.wait({deployment}, "the components", later()),
                       "Deployment/flux-system/d: deleted while waiting", Error);
}

TEST_CASE("engine: the hook before each request can stop it") {
  FakeCluster cluster;
  cluster.put(namespace_object("flux-system"));
  int calls = 0;
  Engine engine(cluster, {.before_request = [&] {
                  if (++calls > 1) throw Error("interrupted");
                }});
  CHECK_THROWS_WITH_AS(apply_one(engine, config_map("cm")), "interrupted", Error);
  CHECK(cluster.logged("APPLY").empty());
}

// A Deployment that cannot roll out, with the pod the scheduler left
// pending and the claim it waits for, in a cluster that serves what a
// diagnosis reads.
FakeCluster unschedulable_cluster(const std::string& storage_class) {
  FakeCluster cluster;
  for (const char* kind : {"/v1/Pod", "apps/v1/ReplicaSet", "/v1/Event",
                           "/v1/PersistentVolumeClaim", "storage.k8s.io/v1/StorageClass"}) {
    cluster.served.insert(kind);
  }
  cluster.put(namespace_object("flux-system"));
  cluster.put(json::parse(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {
    "name": "d-1", "namespace": "flux-system", "uid": "uid-d-1", "labels": {"app": "d"}},
    "status": {"conditions": [{"type": "PodScheduled", "status": "False",
      "reason": "Unschedulable", "message": "pod has unbound immediate PersistentVolumeClaims"}]}})"));
  cluster.put(json::parse(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {
    "name": "other", "namespace": "flux-system", "uid": "uid-other", "labels": {"app": "other"}},
    "status": {"conditions": [{"type": "PodScheduled", "status": "False",
      "reason": "Unschedulable", "message": "another's"}]}})"));
  cluster.put(json::parse(R"({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {
    "name": "data", "namespace": "flux-system", "uid": "uid-data"},
    "spec": {"storageClassName": ")" +
                          storage_class + R"("}, "status": {"phase": "Pending"}})"));
  cluster.put(json::parse(R"({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
    "metadata": {"name": "never"}, "provisioner": "example.com/never"})"));
  cluster.put(json::parse(R"({"apiVersion": "v1", "kind": "Event", "metadata": {
    "name": "data.1", "namespace": "flux-system"}, "type": "Warning",
    "involvedObject": {"uid": "uid-data"}, "reason": "ProvisioningFailed", "message": "no luck"})"));
  return cluster;
}

json pending_deployment() {
  return json::parse(R"({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
    "name": "d", "namespace": "flux-system", "generation": 1},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
      "template": {"spec": {"volumes": [{"name": "data",
        "persistentVolumeClaim": {"claimName": "data"}}]}}},
    "status": {"observedGeneration": 1, "updatedReplicas": 1, "replicas": 1}})");
}

TEST_CASE("engine: a pending Deployment's cause is reported once, and named at the deadline") {
  FakeCluster cluster = unschedulable_cluster("never");
  cluster.put(pending_deployment());
  std::vector<std::string> lines;
  Engine engine(cluster, {.on_progress = [&](const std::string& line) { lines.push_back(line); }});
  auto started = std::chrono::steady_clock::now();
  // Two diagnoses (2 s apart) before the deadline: the cause is the same.
  CHECK_THROWS_WITH_AS(
      engine.wait({pending_deployment()}, "the components",
                  started + std::chrono::milliseconds(4500)),
      "timeout waiting for Deployment/flux-system/d (0 of 1 replicas available: pod d-1: "
      "Unschedulable: pod has unbound immediate PersistentVolumeClaims; PersistentVolumeClaim "
      "flux-system/data is Pending (StorageClass \"never\", provisioner "
      "\"example.com/never\"): ProvisioningFailed: no luck)",
      Error);
  std::vector<std::string> causes;
  std::copy_if(lines.begin(), lines.end(), std::back_inserter(causes),
               [](const std::string& line) { return line.find("pending") != std::string::npos; });
  REQUIRE(causes.size() == 1);
  CHECK(causes[0].starts_with(
      "Deployment/flux-system/d pending (0 of 1 replicas available): pod d-1: Unschedulable"));
}

TEST_CASE("engine: with a wait status, each poll tells it what is pending and the cause") {
  FakeCluster cluster = unschedulable_cluster("never");
  cluster.put(pending_deployment());
  std::vector<std::string> lines;
  testing::RecordingWaitStatus status;
  Engine engine(cluster, {.on_progress = [&](const std::string& line) { lines.push_back(line); },
                          .wait_status = &status});
  auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(engine.wait({pending_deployment()}, "the components",
                              started + std::chrono::milliseconds(2500)),
                  Error);
  REQUIRE(status.polls.size() > 2);
  CHECK(status.polls.front().what == "the components");
  CHECK(status.polls.front().pending ==
        "Deployment/flux-system/d pending (0 of 1 replicas available)");
  CHECK(status.polls.front().cause.empty());  // not diagnosed yet
  CHECK(status.polls.back().cause.starts_with(
      "pod d-1: Unschedulable: pod has unbound immediate PersistentVolumeClaims"));
  CHECK(status.ended == 1);
  // The cause is the status's to say, not a progress line too.
  for (const std::string& line : lines) CHECK(line.find("pending (") == std::string::npos);
}

TEST_CASE("engine: a wait for deletions tells the status what holds the objects") {
  FakeCluster cluster;
  json held = json::parse(R"({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
    "name": "a", "namespace": "flux-system", "finalizers": ["example.com/hold"],
    "deletionTimestamp": "2026-01-01T00:00:00Z"}})");
  cluster.put(held);
  json other = held;
  other["metadata"]["name"] = "b";
  cluster.put(other);
  testing::RecordingWaitStatus status;
  Engine engine(cluster, {.wait_status = &status});
  CHECK_THROWS_AS(engine.wait_deleted(
                      {kube::object_key(held), kube::object_key(other)}, "the objects to be gone",
                      std::chrono::steady_clock::now() + std::chrono::milliseconds(300)),
                  Error);
  REQUIRE_FALSE(status.polls.empty());
  CHECK(status.polls.back().what == "the objects to be gone");
  CHECK(status.polls.back().pending == "ConfigMap/flux-system/a and 1 other object");
  CHECK(status.polls.back().cause.find("example.com/hold") != std::string::npos);
  CHECK(status.ended == 1);
}

TEST_CASE("engine: a claim whose StorageClass does not exist fails the wait at once") {
  FakeCluster cluster = unschedulable_cluster("nowhere");
  cluster.put(pending_deployment());
  Engine engine(cluster);
  // later() is counted from the start of the run, which may be long past.
  auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(
      engine.wait({pending_deployment()}, "the components", started + std::chrono::seconds(30)),
      "Deployment/flux-system/d: 0 of 1 replicas available: PersistentVolumeClaim "
      "flux-system/data: StorageClass \"nowhere\" does not exist",
      Error);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
}

TEST_CASE("engine: a diagnosis the caller may not read leaves the wait as it was") {
  FakeCluster cluster = unschedulable_cluster("nowhere");
  cluster.put(pending_deployment());
  cluster.refuse_list.emplace("/v1/Pod", kube::ApiError("pods is forbidden", 403, "Forbidden"));
  Engine engine(cluster);
  CHECK_THROWS_WITH_AS(
      engine.wait({pending_deployment()}, "the components",
                  std::chrono::steady_clock::now() + std::chrono::milliseconds(2500)),
      "timeout waiting for Deployment/flux-system/d (0 of 1 replicas available)", Error);
}

}  // namespace
}  // namespace fluxop::ssa
