// The FluxInstance policy on top of the engine, driven on a cluster in
// memory: the instance's own settings, refusals before anything is written,
// and diff and apply agreeing on what is pruned.
#include "core/reconcile/apply.h"

#include <doctest/doctest.h>

#include "../instance/support.h"
#include "../kube/fake_cluster.h"
#include "core/error.h"
#include "core/file.h"
#include "core/reconcile/instance_diff.h"
#include "core/reconcile/inventory.h"
#include "core/rfc3339.h"
#include "core/yaml/json.h"
#include "core/yaml/parse.h"

namespace fluxop::reconcile {
namespace {

using nlohmann::json;
using testing::FakeCluster;

constexpr std::string_view kObjects = R"(apiVersion: v1
kind: Namespace
metadata:
  name: flux-system
  labels: {fluxcd.controlplane.io/name: flux, fluxcd.controlplane.io/namespace: flux-system}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: source-controller
  namespace: flux-system
  labels: {fluxcd.controlplane.io/name: flux, fluxcd.controlplane.io/namespace: flux-system}
spec:
  replicas: 1
)";

render::Rendered rendered(std::string_view objects = kObjects) {
  return {*distribution::parse_version("v2.9.0"),
          "v2.9.0@sha256:0123",
          yaml::parse_documents(objects, "rendered.yaml"),
          {}};
}

void serve_fluxinstances(FakeCluster& cluster) {
  cluster.served.insert("fluxcd.controlplane.io/v1/FluxInstance");
}

struct Run {
  FakeCluster cluster;
  std::vector<std::string> progress;
  ApplyOptions options;

  Run() {
    serve_fluxinstances(cluster);
    options.timeout = std::chrono::seconds(1);
    options.on_progress = [this](const std::string& line) { progress.push_back(line); };
  }
  ApplyResult apply(std::string_view spec, std::string_view metadata = "",
                    std::string_view objects = kObjects) {
    std::string text(instance::testing::kMinimal);
    std::string_view name = "  name: flux\n";
    text.insert(text.find(name) + name.size(), metadata);
    return apply_instance(cluster, instance::testing::load(text + std::string(spec)),
                          rendered(objects), options);
  }
  const json& instance() const { return cluster.objects.at("FluxInstance/flux-system/flux"); }
  // "<status> <reason>" of the instance's Ready condition.
  std::string ready() const {
    for (const json& condition : instance()["status"]["conditions"]) {
      if (condition["type"] == "Ready") {
        return condition["status"].get<std::string>() + " " +
               condition["reason"].get<std::string>();
      }
    }
    return "";
  }
  bool said(std::string_view part) const {
    return std::any_of(progress.begin(), progress.end(),
                       [&](const std::string& line) { return line.find(part) != line.npos; });
  }
};

TEST_CASE(
    "policy: .spec.wait decides the health wait, and YAML 1.1 booleans read as the file says") {
  Run run;
  // The fake's Deployment never becomes ready: a wait could only time out.
  ApplyResult result = run.apply("  wait: false\n  migrateResources: no\n");
  CHECK(result.message.starts_with("Reconciliation finished in"));
  CHECK_FALSE(run.said("the components to roll out"));
  CHECK(run.cluster.objects.at("FluxInstance/flux-system/flux")["status"]["conditions"].dump().find(
            "ReconciliationSucceeded") != std::string::npos);

  Run waiting;
  CHECK_THROWS_WITH_AS(waiting.apply(""), doctest::Contains("timeout waiting for Deployment"),
                       Error);
  CHECK(waiting.said("the components to roll out"));

  Run flag;
  flag.options.wait = false;  // --no-wait
  CHECK_NOTHROW(flag.apply(""));
}

TEST_CASE("policy: an unparsable reconcileTimeout is a warning naming it, then the default") {
  Run run;
  run.options.timeout.reset();
  run.apply("  wait: false\n",
            "  annotations:\n    fluxcd.controlplane.io/reconcileTimeout: banana\n");
  CHECK(
      run.said("instance.yaml: .metadata.annotations.fluxcd.controlplane.io/reconcileTimeout: "
               "'banana' is not a duration such as 5m; using 5m"));
}

TEST_CASE("policy: a namespace being deleted is refused before anything is written") {
  Run run;
  json terminating = {{"apiVersion", "v1"},
                      {"kind", "Namespace"},
                      {"metadata", {{"name", "flux-system"}}},
                      {"status", {{"phase", "Terminating"}}}};
  run.cluster.put(terminating);
  CHECK_THROWS_WITH_AS(
      run.apply(""), doctest::Contains("namespace: Namespace/flux-system is being deleted"), Error);
  CHECK(run.cluster.logged("APPLY").empty());
  CHECK(run.cluster.logged("CREATE").empty());
}

TEST_CASE("policy: a second FluxInstance on the cluster is refused before anything is written") {
  Run run;
  run.cluster.put({{"apiVersion", "fluxcd.controlplane.io/v1"},
                   {"kind", "FluxInstance"},
                   {"metadata", {{"name", "flux"}, {"namespace", "flux-two"}}}});
  CHECK_THROWS_WITH_AS(run.apply("  wait: false\n"),
                       "instance.yaml: FluxInstance flux-two/flux already manages Flux on this "
                       "cluster; there can be only one (delete it first, or apply it instead)",
                       Error);
  CHECK(run.cluster.logged("APPLY").empty());
  CHECK(run.cluster.logged("CREATE").empty());

  // The instance itself, already there, is no other one.
  Run again;
  again.cluster.put({{"apiVersion", "fluxcd.controlplane.io/v1"},
                     {"kind", "FluxInstance"},
                     {"metadata", {{"name", "flux"}, {"namespace", "flux-system"}}}});
  CHECK_NOTHROW(again.apply("  wait: false\n"));
}

TEST_CASE("policy: a second FluxInstance that exists says on itself why it is refused") {
  Run run;
  run.options.instance_from_cluster = true;
  std::vector<InstanceEvent> events;
  run.options.on_event = [&](const InstanceEvent& event) { events.push_back(event); };
  json owner = {{"apiVersion", "fluxcd.controlplane.io/v1"},
                {"kind", "FluxInstance"},
                {"metadata", {{"name", "flux"}, {"namespace", "flux-two"}}},
                {"status", {{"conditions", json::array()}}}};
  run.cluster.put(owner);
  json refused = {
      {"apiVersion", "fluxcd.controlplane.io/v1"},
      {"kind", "FluxInstance"},
      {"metadata", {{"name", "flux"}, {"namespace", "flux-system"}, {"generation", 4}}}};
  run.cluster.put(refused);
  json owner_before = run.cluster.objects.at("FluxInstance/flux-two/flux");
  std::string why =
      "FluxInstance flux-two/flux already manages Flux on this cluster; there can be only one "
      "(delete it first, or apply it instead)";
  CHECK_THROWS_WITH_AS(run.apply("  wait: false\n"), ("instance.yaml: " + why).c_str(), Error);
  CHECK(run.ready() == "False ReconciliationFailed");
  const json& ready = run.instance()["status"]["conditions"][0];
  CHECK(ready["message"] == why);
  CHECK(ready["observedGeneration"] == 4);
  REQUIRE(events.size() == 1);
  CHECK(event_type(events[0].reason) == EventType::warning);
  CHECK(name(events[0].reason) == "ReconciliationFailed");
  CHECK(events[0].message == why);
  // The owner is not touched.
  CHECK(run.cluster.objects.at("FluxInstance/flux-two/flux") == owner_before);
  CHECK(run.cluster.logged("APPLY").empty());
}

TEST_CASE("policy: the CRD accepts exactly the components an instance may list") {
  // As the operator's CRD: an edit in the cluster is not validated by
  // fluxopctl before it is stored.
  json spec = fluxinstance_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
                                ["spec"]["properties"];
  json known = spec["components"]["items"]["enum"];
  REQUIRE(known.size() == 7);
  for (const json& component : known) {
    CHECK_NOTHROW(instance::testing::load_minimal_with("  components: [" +
                                                       component.get<std::string>() + "]\n"));
  }
  CHECK(instance::testing::error_of(std::string(instance::testing::kMinimal) +
                                    "  components: [foo-controller]\n") != "");
}

TEST_CASE("policy: diff and apply agree on what is pruned") {
  auto stale = [](const std::string& name, bool prune_disabled) {
    json object = {{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata",
                    {{"name", name},
                     {"namespace", "flux-system"},
                     {"labels",
                      {{"fluxcd.controlplane.io/name", "flux"},
                       {"fluxcd.controlplane.io/namespace", "flux-system"}}}}}};
    if (prune_disabled) {
      object["metadata"]["annotations"] = {{"fluxcd.controlplane.io/prune", "disabled"}};
    }
    return object;
  };
  auto seed = [&](FakeCluster& cluster) {
    serve_fluxinstances(cluster);
    cluster.put(
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "flux-system"}}}});
    cluster.put(stale("old", false));
    cluster.put(stale("kept", true));
    json live = {
        {"apiVersion", "fluxcd.controlplane.io/v1"},
        {"kind", "FluxInstance"},
        {"metadata", {{"name", "flux"}, {"namespace", "flux-system"}}},
        {"status",
         {{"inventory", inventory_json({{"", "v1", "ConfigMap", "flux-system", "old"},
                                        {"", "v1", "ConfigMap", "flux-system", "kept"}})}}}};
    cluster.put(live);
  };
  instance::FluxInstance flux =
      instance::testing::load(std::string(instance::testing::kMinimal) + "  wait: false\n");

  FakeCluster planned(/*dry_run=*/true);
  seed(planned);
  InstanceDiff diff = diff_instance(planned, flux, rendered());
  CHECK(diff.text.find("prune ConfigMap/flux-system/old\n") != std::string::npos);
  CHECK(diff.text.find("kept") == std::string::npos);
  // -o json says the same, object by object: the namespace gains the
  // owner's labels, the Deployment is new, "old" is pruned.
  json document = diff_json(diff);
  CHECK(document["changed"] == diff.changed);
  auto entry = [&](const std::string& object) {
    for (const json& found : document["objects"])
      if (found["object"] == object) return found;
    return json();
  };
  CHECK(entry("Deployment/flux-system/source-controller") ==
        json{{"object", "Deployment/flux-system/source-controller"},
             {"apiVersion", "apps/v1"},
             {"action", "create"},
             {"fields", json::array()}});
  CHECK(entry("ConfigMap/flux-system/old")["action"] == "delete");
  CHECK(entry("ConfigMap/flux-system/kept").is_null());
  CHECK(entry("Namespace/flux-system")["action"] == "update");
  CHECK(entry("Namespace/flux-system")["fields"] ==
        json::parse(R"([{"path": "/metadata/labels", "after": {
          "fluxcd.controlplane.io/name": "flux", "fluxcd.controlplane.io/namespace": "flux-system"}}])"));

  Run run;
  seed(run.cluster);
  ApplyResult result = run.apply("  wait: false\n");
  std::vector<std::string> prunes;
  for (const ssa::Change& change : result.changes) {
    if (change.ref.kind == "ConfigMap") prunes.push_back(ssa::change_line(change));
  }
  CHECK(prunes == std::vector<std::string>{"ConfigMap/flux-system/kept skipped",
                                           "ConfigMap/flux-system/old deleted"});
  CHECK(run.cluster.logged("DELETE") == std::vector<std::string>{"ConfigMap/flux-system/old"});
}

TEST_CASE("policy: the status records a success: conditions, inventory, revision, history") {
  Run run;
  run.apply("  wait: false\n");
  const json& status = run.instance()["status"];
  CHECK(run.ready() == "True ReconciliationSucceeded");
  CHECK(status["lastAppliedRevision"] == "v2.9.0@sha256:0123");
  CHECK(status["lastAttemptedRevision"] == "v2.9.0@sha256:0123");
  CHECK(status["inventory"] ==
        inventory_json({{"", "v1", "Namespace", "", "flux-system"},
                        {"apps", "v1", "Deployment", "flux-system", "source-controller"}}));
  REQUIRE(status["history"].size() == 1);
  CHECK(status["history"][0]["lastReconciledStatus"] == "ReconciliationSucceeded");
  CHECK(status["history"][0]["totalReconciliations"] == 1);
  for (const json& condition : status["conditions"]) CHECK(condition["type"] != "Reconciling");

  // Again, with nothing to change: one status write, the same history entry counted.
  run.cluster.requests_log.clear();
  run.apply("  wait: false\n");
  CHECK(run.cluster.logged("STATUS").size() == 1);
  CHECK(run.cluster.logged("APPLY").empty());
  CHECK(run.instance()["status"]["history"].size() == 1);
  CHECK(run.instance()["status"]["history"][0]["totalReconciliations"] == 2);
  CHECK_FALSE(run.instance()["status"].contains("lastArtifactRevision"));

  // From a pulled artifact, its digest is recorded as the operator records it.
  run.options.artifact_revision = "sha256:feed";
  run.apply("  wait: false\n");
  CHECK(run.instance()["status"]["lastArtifactRevision"] == "sha256:feed");
}

// Fields the schema does not declare (the path of the first), checked as the
// API server's strict field validation does.
std::string undeclared(const json& value, const json& schema, const std::string& path) {
  if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      std::string found = undeclared(value[i], schema.value("items", json::object()),
                                     path + "[" + std::to_string(i) + "]");
      if (!found.empty()) return found;
    }
  }
  if (!value.is_object() || schema.value("x-kubernetes-preserve-unknown-fields", false) ||
      schema.contains("additionalProperties"))
    return "";
  json properties = schema.value("properties", json::object());
  for (const auto& [key, item] : value.items()) {
    if (!properties.contains(key)) return path + "." + key;
    std::string found = undeclared(item, properties[key], path + "." + key);
    if (!found.empty()) return found;
  }
  return "";
}

// The operator's CRD declares no other status field; ours declares the same.
TEST_CASE("policy: the status written has only the fields the FluxInstance CRD declares") {
  json schema = fluxinstance_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
  Run run;
  run.apply("  wait: false\n");
  CHECK(undeclared(run.instance()["status"], schema["properties"]["status"], ".status") == "");
  CHECK(run.instance()["status"]["components"].is_array());
  Run failed;
  CHECK_THROWS(failed.apply(""));
  CHECK(undeclared(failed.instance()["status"], schema["properties"]["status"], ".status") == "");
  // The check itself finds what upstream's API server refused.
  CHECK(undeclared({{"observedGeneration", 1}}, schema["properties"]["status"], ".status") ==
        ".status.observedGeneration");
}

// As the operator's users leave it: applied by their GitOps, never by the
// operator. Applying the same spec would only add fluxopctl as a co-owner.
TEST_CASE("policy: an instance with the file's values, applied by another tool, is not written") {
  Run run;
  run.cluster.put(
      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "flux-system"}}}});
  json applied_by_flux = {
      {"apiVersion", "fluxcd.controlplane.io/v1"},
      {"kind", "FluxInstance"},
      {"metadata",
       {{"name", "flux"},
        {"namespace", "flux-system"},
        {"generation", 4},
        {"managedFields",
         {{{"manager", "kustomize-controller"}, {"operation", "Apply"}, {"fieldsV1", {}}}}}}},
      {"spec",
       {{"distribution", {{"version", "2.x"}, {"registry", "ghcr.io/fluxcd"}}},
        {"wait", false},
        {"migrateResources", true}}}};
  run.cluster.put(applied_by_flux);
  run.apply("  wait: false\n");
  for (const std::string& applied : run.cluster.logged("APPLY")) {
    CHECK(applied.find("FluxInstance") == std::string::npos);
  }
  CHECK(run.ready() == "True ReconciliationSucceeded");
  CHECK(run.instance()["status"]["conditions"][0]["observedGeneration"] == 4);

  // A value of the file that is not there is applied.
  run.cluster.requests_log.clear();
  run.apply("  wait: false\n  migrateResources: false\n");
  CHECK(run.cluster.logged("APPLY") == std::vector<std::string>{"FluxInstance/flux-system/flux"});
  // Owned by fluxopctl too, with nothing it no longer applies: not written.
  json co_owned = applied_by_flux;
  co_owned["spec"]["migrateResources"] = false;
  co_owned["metadata"]["managedFields"].push_back(json::parse(R"({
      "manager": "flux-operator", "operation": "Apply",
      "fieldsV1": {"f:spec": {"f:distribution": {"f:version": {}}, "f:migrateResources": {}}}})"));
  run.cluster.put(co_owned);
  run.cluster.requests_log.clear();
  run.apply("  wait: false\n  migrateResources: false\n");
  CHECK(run.cluster.logged("APPLY").empty());
  // A field it owns and the file no longer sets is removed by an apply.
  run.cluster.put(co_owned);
  run.apply("  wait: false\n");
  CHECK(run.cluster.logged("APPLY") == std::vector<std::string>{"FluxInstance/flux-system/flux"});
  // A field a kubectl command owns is taken over (and so applied).
  Run patched;
  patched.cluster.put(
      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "flux-system"}}}});
  applied_by_flux["metadata"]["managedFields"][0]["manager"] = "kubectl-patch";
  patched.cluster.put(applied_by_flux);
  patched.apply("  wait: false\n");
  std::vector<std::string> writes = patched.cluster.logged("APPLY");
  CHECK(std::find(writes.begin(), writes.end(), "FluxInstance/flux-system/flux") != writes.end());
}

TEST_CASE("policy: an instance read from the cluster is never written but for its status") {
  Run run;
  run.options.instance_from_cluster = true;
  run.cluster.put(
      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "flux-system"}}}});
  // Nothing to reconcile: the instance is gone.
  CHECK_THROWS_WITH(run.apply(""), "FluxInstance/flux-system/flux: not found");
  CHECK(run.cluster.logged("APPLY").empty());
  // Its values differ from the file's and kubectl owns them: still not written.
  run.cluster.put(
      {{"apiVersion", "fluxcd.controlplane.io/v1"},
       {"kind", "FluxInstance"},
       {"metadata",
        {{"name", "flux"},
         {"namespace", "flux-system"},
         {"generation", 2},
         {"managedFields",
          {{{"manager", "kubectl-patch"}, {"operation", "Update"}, {"fieldsV1", {}}}}}}},
       {"spec", {{"distribution", {{"version", "2.9.x"}, {"registry", "x"}}}}}});
  run.apply("  wait: false\n");
  for (const std::string& applied : run.cluster.logged("APPLY")) {
    CHECK(applied.find("FluxInstance") == std::string::npos);
  }
  CHECK(run.instance()["spec"]["distribution"]["registry"] == "x");
  CHECK(run.ready() == "True ReconciliationSucceeded");
  CHECK(run.instance()["status"]["conditions"][0]["observedGeneration"] == 2);
}

TEST_CASE("policy: disabled before any reconcile, the status says so, after it is kept") {
  Run run;
  json never_reconciled = {
      {"apiVersion", "fluxcd.controlplane.io/v1"},
      {"kind", "FluxInstance"},
      {"metadata", {{"name", "flux"}, {"namespace", "flux-system"}, {"generation", 1}}},
      {"spec", json::object()}};
  run.cluster.put(never_reconciled);
  instance::FluxInstance flux = instance::testing::load(std::string(instance::testing::kMinimal));
  record_disabled(run.cluster, flux);
  CHECK(run.ready() == "True ReconciliationDisabled");
  CHECK(run.instance()["status"]["conditions"][0]["message"] ==
        "Initialized with reconciliation suspended");
  // Reconciled once: its Ready condition stays as it was.
  run.cluster.put(
      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "flux-system"}}}});
  run.apply("  wait: false\n");
  REQUIRE(run.ready() == "True ReconciliationSucceeded");
  record_disabled(run.cluster, flux);
  CHECK(run.ready() == "True ReconciliationSucceeded");
  // Nothing absent is written.
  Run empty;
  record_disabled(empty.cluster, flux);
  CHECK(empty.cluster.objects.empty());
}

TEST_CASE("policy: a lower minor than the one applied is refused: BuildFailed, Stalled") {
  Run run;
  run.cluster.put(
      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "flux-system"}}}});
  run.cluster.put({{"apiVersion", "fluxcd.controlplane.io/v1"},
                   {"kind", "FluxInstance"},
                   {"metadata", {{"name", "flux"}, {"namespace", "flux-system"}}},
                   {"status", {{"lastAppliedRevision", "v2.10.1@sha256:0123"}}}});
  CHECK_THROWS_WITH_AS(run.apply("  wait: false\n"),
                       "instance.yaml: .spec.distribution.version: downgrading from v2.10.1 to "
                       "v2.9.0 is not supported, reinstall needed",
                       Error);
  CHECK(run.ready() == "False BuildFailed");
  bool stalled = false;
  for (const json& condition : run.instance()["status"]["conditions"]) {
    if (condition["type"] == "Stalled") {
      stalled = condition["status"] == "True" && condition["reason"] == "BuildFailed" &&
                condition["message"] ==
                    "build failed: downgrading from v2.10.1 to v2.9.0 is not supported, "
                    "reinstall needed";
    }
  }
  CHECK(stalled);
  // The instance's spec is written (as by kubectl under an operator), nothing else.
  CHECK(run.cluster.logged("APPLY").size() == 2);  // and the FluxInstance CRD
  CHECK_FALSE(run.cluster.objects.contains("Deployment/flux-system/source-controller"));

  // A patch release lower than the one applied is no downgrade of the minor;
  // the success clears Stalled.
  run.cluster.objects.at("FluxInstance/flux-system/flux")["status"]["lastAppliedRevision"] =
      "v2.9.4@sha256:0123";
  CHECK_NOTHROW(run.apply("  wait: false\n"));
  CHECK(run.ready() == "True ReconciliationSucceeded");
  CHECK(run.instance()["status"]["conditions"].dump().find("Stalled") == std::string::npos);
}

TEST_CASE("policy: a refused object: Ready=False ReconciliationFailed, nothing pruned") {
  Run run;
  run.cluster.put(
      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "flux-system"}}}});
  json stale = {{"apiVersion", "v1"},
                {"kind", "ConfigMap"},
                {"metadata",
                 {{"name", "old"},
                  {"namespace", "flux-system"},
                  {"labels",
                   {{"fluxcd.controlplane.io/name", "flux"},
                    {"fluxcd.controlplane.io/namespace", "flux-system"}}}}}};
  run.cluster.put(stale);
  run.cluster.put(
      {{"apiVersion", "fluxcd.controlplane.io/v1"},
       {"kind", "FluxInstance"},
       {"metadata", {{"name", "flux"}, {"namespace", "flux-system"}}},
       {"status",
        {{"inventory", inventory_json({{"", "v1", "ConfigMap", "flux-system", "old"}})}}}});
  run.cluster.put({{"apiVersion", "apps/v1"},
                   {"kind", "Deployment"},
                   {"metadata", {{"name", "source-controller"}, {"namespace", "flux-system"}}},
                   {"spec", {{"replicas", 3}}}});
  run.cluster.refuse_apply.emplace(
      "Deployment/flux-system/source-controller",
      kube::ApiError("Deployment/flux-system/source-controller: forbidden", 403, "Forbidden"));
  CHECK_THROWS_WITH_AS(run.apply("  wait: false\n"),
                       "Deployment/flux-system/source-controller: forbidden", ReconcileError);
  try {
    run.apply("  wait: false\n");
  } catch (const ReconcileError& error) {
    CHECK(name(error.reason()) == "ReconciliationFailed");
  }
  CHECK(run.ready() == "False ReconciliationFailed");
  CHECK(run.cluster.logged("DELETE").empty());
  // The stale object stays tracked until an apply succeeds.
  CHECK(run.instance()["status"]["inventory"].dump().find("flux-system_old__ConfigMap") !=
        std::string::npos);
  CHECK(run.instance()["status"]["history"][0]["lastReconciledStatus"] == "ReconciliationFailed");
}

TEST_CASE("policy: an interruption is recorded as such, not as the request it cut short") {
  Run run;
  std::string stopped;
  run.options.interruption = [&] { return stopped; };
  run.cluster.on_apply = [&](const json& object) {
    if (object["kind"] != "Deployment") return;
    stopped = "interrupted by SIGINT";
    throw Error("https://127.0.0.1:6443/apis/apps/v1/namespaces/flux-system/deployments/" +
                object["metadata"]["name"].get<std::string>() + ": cancelled");
  };
  CHECK_THROWS_WITH_AS(run.apply("  wait: false\n"), "interrupted by SIGINT", ReconcileError);
  std::string message;
  for (const json& condition : run.instance()["status"]["conditions"]) {
    if (condition["type"] == "Ready") message = condition["message"];
  }
  CHECK(message == "interrupted by SIGINT");
}

TEST_CASE("policy: a rollout that does not end: Ready=False HealthCheckFailed") {
  Run run;
  CHECK_THROWS_WITH_AS(run.apply(""), doctest::Contains("timeout waiting for Deployment"), Error);
  CHECK(run.ready() == "False HealthCheckFailed");
}

TEST_CASE(
    "policy: the Lease: a live holder makes the apply wait, then fail naming it, an expired one "
    "is taken, the apply releases it") {
  auto lease = [](const std::string& renewed) {
    return json{{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", {{"name", "fluxopctl-flux"}, {"namespace", "flux-system"}}},
                {"spec",
                 {{"holderIdentity", "elsewhere/1"},
                  {"leaseDurationSeconds", 30},
                  {"renewTime", renewed}}}};
  };
  json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "flux-system"}}}};
  Run held;
  held.cluster.put(ns);
  held.cluster.put(lease(utc_rfc3339(std::time(nullptr)).substr(0, 19) + ".000000Z"));
  held.options.lock_timeout = std::chrono::seconds(1);
  CHECK_THROWS_WITH_AS(held.apply("  wait: false\n"), doctest::Contains("held by elsewhere/1"),
                       Error);
  CHECK(held.cluster.logged("APPLY").empty());
  CHECK(held.cluster.objects.at("Lease/flux-system/fluxopctl-flux")["spec"]["holderIdentity"] ==
        "elsewhere/1");

  Run expired;
  expired.cluster.put(ns);
  expired.cluster.put(lease("2020-01-01T00:00:00.000000Z"));
  CHECK_NOTHROW(expired.apply("  wait: false\n"));
  CHECK(expired.cluster.objects.at("Lease/flux-system/fluxopctl-flux")["spec"]["holderIdentity"] ==
        "");
  CHECK(expired.ready() == "True ReconciliationSucceeded");
}

// A CRD of Widgets with these versions (YAML flow items, one per line).
std::string widget_crd(std::string_view versions) {
  return R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget}
  versions:
)" + std::string(versions);
}

TEST_CASE("policy: resources stored in an old version are written again, storedVersions trimmed") {
  const std::string kWithCrd = widget_crd(
      "    - {name: v1beta1, served: true, storage: false}\n"
      "    - {name: v1, served: true, storage: true}\n");
  auto seed = [&kWithCrd](Run& run) {
    run.cluster.served.insert("example.com/v1/Widget");
    json crd = yaml::to_sorted_json(yaml::parse_documents(kWithCrd, "crd.yaml").at(0));
    crd["status"] = {{"storedVersions", {"v1beta1", "v1"}}};
    run.cluster.put(crd);
    run.cluster.put({{"apiVersion", "example.com/v1"},
                     {"kind", "Widget"},
                     {"metadata", {{"name", "w"}, {"namespace", "default"}}}});
  };
  Run run;
  seed(run);
  run.apply("  wait: false\n", "", kWithCrd);
  auto widget_replaced = [](const Run& r) {
    std::vector<std::string> replaced = r.cluster.logged("PATCH");
    return std::count(replaced.begin(), replaced.end(), "Widget/default/w");
  };
  CHECK(widget_replaced(run) == 1);
  CHECK(run.cluster.objects.at(
            "CustomResourceDefinition/widgets.example.com")["status"]["storedVersions"] ==
        json{"v1"});
  CHECK(run.said("migrated 1 objects to v1"));

  Run off;  // migrateResources: false
  seed(off);
  off.apply("  wait: false\n  migrateResources: false\n", "", kWithCrd);
  CHECK(widget_replaced(off) == 0);
  CHECK(off.cluster.objects.at(
            "CustomResourceDefinition/widgets.example.com")["status"]["storedVersions"] ==
        json{"v1beta1", "v1"});
}

TEST_CASE("policy: objects stored in a version the new CRD drops: refused first, naming the way") {
  const std::string kNewCrd = widget_crd("    - {name: v1, served: true, storage: true}\n");
  Run run;
  json old = yaml::to_sorted_json(yaml::parse_documents(kNewCrd, "crd.yaml").at(0));
  old["spec"]["versions"] =
      json::parse(R"([{"name": "v1beta1", "served": true, "storage": true}])");
  old["status"] = {{"storedVersions", {"v1beta1"}}};
  run.cluster.put(old);
  std::vector<std::string> asked;
  run.options.intermediate_version = [&](const std::string& crd,
                                         const std::vector<std::string>& versions) {
    asked = versions;
    asked.insert(asked.begin(), crd);
    return std::string("v2.7.5");
  };
  CHECK_THROWS_WITH_AS(run.apply("  wait: false\n", "", kNewCrd),
                       "CustomResourceDefinition/widgets.example.com: objects are stored as "
                       "v1beta1, which Flux v2.9.0 no longer serves: apply Flux v2.7.5 first (with "
                       "migrateResources, it stores them as v1), then this one",
                       Error);
  CHECK(asked == std::vector<std::string>{"widgets.example.com", "v1beta1", "v1"});
  std::vector<std::string> applied = run.cluster.logged("APPLY");
  CHECK(std::count(applied.begin(), applied.end(),
                   "CustomResourceDefinition/widgets.example.com") == 0);
  CHECK(run.cluster.objects.at("CustomResourceDefinition/widgets.example.com")["spec"] ==
        old["spec"]);
  CHECK(run.ready() == "False ReconciliationFailed");
}

TEST_CASE("policy: a first install applies the instance after the objects, its CRD established") {
  Run run;
  run.cluster.served.erase("fluxcd.controlplane.io/v1/FluxInstance");
  run.cluster.establish = false;
  // The API server establishes the CRD while the objects are applied.
  run.cluster.on_apply = [&](const json& object) {
    if (object.value("kind", "") != "Deployment") return;
    run.cluster.objects.at(
        "CustomResourceDefinition/fluxinstances.fluxcd.controlplane.io")["status"]["conditions"] =
        json::array({{{"type", "Established"}, {"status", "True"}}});
    run.cluster.served.insert("fluxcd.controlplane.io/v1/FluxInstance");
  };
  // Its events are told once it exists, in their order, so that each names
  // it (by its uid in a real cluster).
  run.options.outdated_version = "Flux v2.8.0 is outdated, the latest stable version is v2.9.0";
  std::vector<std::string> events;  // "<reason> <instance there>"
  run.options.on_event = [&](const InstanceEvent& event) {
    bool there = run.cluster.objects.count("FluxInstance/flux-system/flux") == 1;
    events.push_back(std::string(name(event.reason)) + (there ? " there" : " missing"));
  };
  run.apply("  wait: false\n");
  CHECK(events == std::vector<std::string>{"OutdatedVersion there", "Progressing there",
                                           "ReconciliationSucceeded there"});
  std::vector<std::string> applied = run.cluster.logged("APPLY");
  auto at = [&](const std::string& name) {
    return std::find(applied.begin(), applied.end(), name) - applied.begin();
  };
  CHECK(at("CustomResourceDefinition/fluxinstances.fluxcd.controlplane.io") <
        at("Deployment/flux-system/source-controller"));
  CHECK(at("Deployment/flux-system/source-controller") < at("FluxInstance/flux-system/flux"));
  CHECK(at("FluxInstance/flux-system/flux") < static_cast<std::ptrdiff_t>(applied.size()));
  // New, it had nothing to keep track of: one status write, at the end.
  CHECK(run.cluster.logged("STATUS").size() == 1);
  CHECK(run.ready() == "True ReconciliationSucceeded");
}

TEST_CASE("policy: events as the operator records them: installing, upgrading, success, failure") {
  Run run;
  std::vector<InstanceEvent> events;
  run.options.on_event = [&](const InstanceEvent& event) { events.push_back(event); };
  run.apply("  wait: false\n");
  REQUIRE(events.size() == 2);
  CHECK(name(events[0].reason) == "Progressing");
  CHECK(events[0].message == "Installing revision v2.9.0@sha256:0123");
  CHECK(event_type(events[0].reason) == EventType::normal);
  CHECK(name(events[1].reason) == "ReconciliationSucceeded");
  CHECK(events[1].message.starts_with("Reconciliation finished in "));
  CHECK(events[1].revision == "v2.9.0@sha256:0123");

  // The same revision again: no Progressing.
  events.clear();
  run.apply("  wait: false\n");
  REQUIRE(events.size() == 1);
  CHECK(name(events[0].reason) == "ReconciliationSucceeded");

  // A failure is a Warning with the Ready condition's reason and message.
  events.clear();
  run.cluster.objects.at("Deployment/flux-system/source-controller")["spec"]["replicas"] = 3;
  run.cluster.refuse_apply.emplace(
      "Deployment/flux-system/source-controller",
      kube::ApiError("Deployment/flux-system/source-controller: forbidden", 403, "Forbidden"));
  CHECK_THROWS_AS(run.apply("  wait: false\n  components: [source-controller]\n"), ReconcileError);
  REQUIRE_FALSE(events.empty());
  CHECK(event_type(events.back().reason) == EventType::warning);
  CHECK(name(events.back().reason) == "ReconciliationFailed");
  CHECK(events.back().message == "Deployment/flux-system/source-controller: forbidden");
}

TEST_CASE(
    "policy: requestedAt is recorded as handled whatever the outcome, forceAt once migrated") {
  Run run;
  std::string requested =
      "  annotations:\n    reconcile.fluxcd.io/requestedAt: \"2026-11-23T10:00:00Z\"\n";
  run.apply("  wait: false\n", requested);
  CHECK(run.instance()["status"]["lastHandledReconcileAt"] == "2026-11-23T10:00:00Z");
  CHECK_FALSE(run.instance()["status"].contains("lastHandledForceAt"));

  run.cluster.objects.at("Deployment/flux-system/source-controller")["spec"]["replicas"] = 3;
  run.cluster.refuse_apply.emplace(
      "Deployment/flux-system/source-controller",
      kube::ApiError("Deployment/flux-system/source-controller: forbidden", 403, "Forbidden"));
  CHECK_THROWS_AS(run.apply("  wait: false\n",
                            "  annotations:\n    reconcile.fluxcd.io/requestedAt: \"second\"\n"
                            "    reconcile.fluxcd.io/forceAt: \"now\"\n"),
                  ReconcileError);
  CHECK(run.instance()["status"]["lastHandledReconcileAt"] == "second");
  // The apply failed before its migration: the next one is to make it.
  CHECK_FALSE(run.instance()["status"].contains("lastHandledForceAt"));
}

TEST_CASE("policy: forceAt migrates every custom resource once") {
  Run run;
  std::string crd = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  labels: {fluxcd.controlplane.io/name: flux, fluxcd.controlplane.io/namespace: flux-system}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - {name: v1, served: true, storage: true}
)";
  run.cluster.served.insert("example.com/v1/Widget");
  run.cluster.put({{"apiVersion", "example.com/v1"},
                   {"kind", "Widget"},
                   {"metadata", {{"name", "w"}, {"namespace", "apps"}}}});
  auto migrated = [&run] {
    std::vector<std::string> replaced = run.cluster.logged("PATCH");
    return std::count(replaced.begin(), replaced.end(), "Widget/apps/w");
  };
  run.apply("  wait: false\n", "", crd);
  // Stored in the storage version only: nothing to migrate.
  CHECK(migrated() == 0);
  std::string force = "  annotations:\n    reconcile.fluxcd.io/forceAt: \"t1\"\n";
  run.apply("  wait: false\n", force, crd);
  CHECK(migrated() == 1);
  CHECK(run.instance()["status"]["lastHandledForceAt"] == "t1");
  // Handled: not again.
  run.cluster.requests_log.clear();
  run.apply("  wait: false\n", force, crd);
  CHECK(migrated() == 0);

  // A forced migration that fails is not handled: the next apply makes it.
  std::string again = "  annotations:\n    reconcile.fluxcd.io/forceAt: \"t2\"\n";
  run.cluster.refuse_patch.emplace("Widget/apps/w",
                                   kube::ApiError("Widget/apps/w: conflict", 409, "Conflict"));
  CHECK_THROWS_AS(run.apply("  wait: false\n", again, crd), ReconcileError);
  CHECK(run.instance()["status"]["lastHandledForceAt"] == "t1");
  run.cluster.refuse_patch.clear();
  run.cluster.requests_log.clear();
  run.apply("  wait: false\n", again, crd);
  CHECK(migrated() == 1);
  CHECK(run.instance()["status"]["lastHandledForceAt"] == "t2");
}

TEST_CASE("policy: a failure before any apply is recorded on an existing instance") {
  Run run;
  std::vector<InstanceEvent> events;
  auto on_event = [&](const InstanceEvent& event) { events.push_back(event); };
  instance::FluxInstance flux = instance::testing::load(std::string(instance::testing::kMinimal));
  // No instance yet: nothing to record on.
  record_failure(run.cluster, flux, Failure::build, "build failed: no version", on_event);
  CHECK(events.empty());
  CHECK(run.cluster.logged("STATUS").empty());

  run.apply("  wait: false\n");
  record_failure(run.cluster, flux, Failure::build, "build failed: no version", on_event);
  CHECK(run.ready() == "False BuildFailed");
  CHECK(run.instance()["status"]["conditions"].dump().find("Stalled") != std::string::npos);
  CHECK(run.instance()["status"]["history"][0]["lastReconciledStatus"] == "BuildFailed");
  REQUIRE(events.size() == 1);
  CHECK(event_type(events[0].reason) == EventType::warning);
  CHECK(name(events[0].reason) == "BuildFailed");
  // What was applied stays applied, with its revision.
  CHECK(run.instance()["status"]["lastAppliedRevision"] == "v2.9.0@sha256:0123");

  record_failure(run.cluster, flux, Failure::artifact, "fetch failed: timeout", on_event);
  CHECK(run.ready() == "False ArtifactFailed");
}

TEST_CASE("policy: an instance in the cluster that does not load: BuildFailed on it, once asked") {
  Run run;
  std::vector<InstanceEvent> events;
  auto on_event = [&](const InstanceEvent& event) { events.push_back(event); };
  kube::ObjectKey ref = instance_ref("flux-system", "flux");
  record_unreadable(run.cluster, ref, "build failed: .spec.components[0]: foo", on_event);
  CHECK(events.empty());  // no instance: nothing to say it on

  run.apply("  wait: false\n");
  json& live = run.cluster.objects.at("FluxInstance/flux-system/flux");
  live["metadata"]["generation"] = 7;
  live["metadata"]["annotations"] = {{"reconcile.fluxcd.io/requestedAt", "t9"}};
  live["spec"]["components"] = {"foo-controller"};
  record_unreadable(run.cluster, ref, "build failed: .spec.components[0]: foo", on_event);
  CHECK(run.ready() == "False BuildFailed");
  const json& status = run.instance()["status"];
  CHECK(status["conditions"].dump().find("Stalled") != std::string::npos);
  for (const json& condition : status["conditions"]) CHECK(condition["observedGeneration"] == 7);
  CHECK(status["lastHandledReconcileAt"] == "t9");
  CHECK(status["history"][0]["lastReconciledStatus"] == "BuildFailed");
  REQUIRE(events.size() == 1);
  CHECK(event_type(events[0].reason) == EventType::warning);
  CHECK(name(events[0].reason) == "BuildFailed");
  CHECK(events[0].message == "build failed: .spec.components[0]: foo");
}

namespace prunes {

const json kOwner = {{"fluxcd.controlplane.io/name", "flux"},
                     {"fluxcd.controlplane.io/namespace", "flux-system"}};

json owned(std::string api_version, std::string kind, std::string ns, std::string name) {
  json metadata = {{"name", name}, {"labels", kOwner}};
  if (!ns.empty()) metadata["namespace"] = ns;
  return {{"apiVersion", api_version}, {"kind", kind}, {"metadata", metadata}};
}

json helmrelease_crd() {
  json crd = owned("apiextensions.k8s.io/v1", "CustomResourceDefinition", "",
                   "helmreleases.helm.toolkit.fluxcd.io");
  crd["spec"] = {{"group", "helm.toolkit.fluxcd.io"},
                 {"names", {{"kind", "HelmRelease"}, {"plural", "helmreleases"}}},
                 {"versions", {{{"name", "v2"}, {"served", true}, {"storage", true}}}}};
  return crd;
}

// A user's custom resource, held by its controller's finalizer.
json users(std::string api_version, std::string kind, std::string ns, std::string name) {
  return {
      {"apiVersion", api_version},
      {"kind", kind},
      {"metadata", {{"name", name}, {"namespace", ns}, {"finalizers", {"finalizers.fluxcd.io"}}}},
      {"spec", {{"interval", "5m"}}}};
}

// The instance as applied before, with `inventory` (the rendered objects
// besides).
void installed(FakeCluster& cluster, const std::vector<json>& inventory) {
  serve_fluxinstances(cluster);
  cluster.put(
      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "flux-system"}}}});
  std::vector<kube::ObjectKey> refs;
  for (const json& object : inventory) {
    cluster.put(object);
    refs.push_back(kube::object_key(object));
  }
  cluster.put(
      {{"apiVersion", "fluxcd.controlplane.io/v1"},
       {"kind", "FluxInstance"},
       {"metadata", {{"name", "flux"}, {"namespace", "flux-system"}}},
       {"status",
        {{"inventory", inventory_json(refs)}, {"lastAppliedRevision", "v2.9.0@sha256:0123"}}}});
}

json diff_entry(const json& document, const std::string& object) {
  for (const json& found : document["objects"])
    if (found["object"] == object) return found;
  return json();
}

std::size_t index_of(const std::vector<std::string>& log, const std::string& line) {
  return static_cast<std::size_t>(std::find(log.begin(), log.end(), line) - log.begin());
}

}  // namespace prunes

TEST_CASE("policy: a CRD whose custom resources remain is kept and said, in diff, apply, status") {
  using namespace prunes;
  auto seed = [](FakeCluster& cluster) {
    cluster.served.insert("helm.toolkit.fluxcd.io/v2/HelmRelease");
    installed(cluster, {helmrelease_crd()});
    cluster.put(users("helm.toolkit.fluxcd.io/v2", "HelmRelease", "apps", "podinfo"));
    cluster.put(users("helm.toolkit.fluxcd.io/v2", "HelmRelease", "apps", "redis"));
    cluster.put(users("helm.toolkit.fluxcd.io/v2", "HelmRelease", "team-b", "api"));
  };
  instance::FluxInstance flux =
      instance::testing::load(std::string(instance::testing::kMinimal) + "  wait: false\n");
  const std::string crd = "CustomResourceDefinition/helmreleases.helm.toolkit.fluxcd.io";

  FakeCluster planned(/*dry_run=*/true);
  seed(planned);
  InstanceDiff diff = diff_instance(planned, flux, rendered());
  CHECK(diff.text.find("keep " + crd +
                       ": 3 HelmRelease (apps: 2, team-b: 1) remain (--prune-crds deletes them "
                       "with it)\n") != std::string::npos);
  json kept = diff_entry(diff_json(diff), crd);
  CHECK(kept["action"] == "keep");
  CHECK(kept["keeps"] == json::parse(R"([
    {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "namespace": "apps", "count": 2},
    {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "namespace": "team-b", "count": 1}])"));
  CHECK(kept["takes"] == json::array());
  InstanceDiff asked = diff_instance(planned, flux, rendered(), {.prune_crds = true});
  CHECK(asked.text.find("prune " + crd +
                        " with its custom resources (--prune-crds): 3 HelmRelease (apps: 2, "
                        "team-b: 1)\n") != std::string::npos);
  CHECK(diff_entry(diff_json(asked), crd)["takes"].size() == 2);
  CHECK(asked.changed == diff.changed + 1);

  Run run;
  seed(run.cluster);
  std::vector<InstanceEvent> events;
  run.options.on_event = [&](const InstanceEvent& event) { events.push_back(event); };
  ApplyResult result = run.apply("  wait: false\n");
  std::string said = crd +
                     " kept: 3 HelmRelease (apps: 2, team-b: 1) remain; apply --prune-crds "
                     "deletes them with it";
  CHECK(run.said("warning: " + said));
  CHECK(result.message.ends_with("; " + said));
  CHECK(run.ready() == "True ReconciliationSucceeded");
  CHECK(std::any_of(events.begin(), events.end(), [&](const InstanceEvent& event) {
    return name(event.reason) == "PruneSkipped" && event.message == said;
  }));
  CHECK(run.cluster.objects.contains(crd));
  CHECK(run.cluster.logged("DELETE").empty());
  // Still the instance's: the next apply prunes it once its resources are gone.
  CHECK(run.instance()["status"]["inventory"].dump().find(
            "_helmreleases.helm.toolkit.fluxcd.io_apiextensions.k8s.io_CustomResourceDefinition") !=
        std::string::npos);
  for (const char* name :
       {"HelmRelease/apps/podinfo", "HelmRelease/apps/redis", "HelmRelease/team-b/api"})
    run.cluster.objects.erase(name);
  run.apply("  wait: false\n");
  CHECK(run.cluster.logged("DELETE") == std::vector<std::string>{crd});
}

TEST_CASE("policy: an object labelled the instance's but lost from its inventory is pruned") {
  using namespace prunes;
  // One entry lost (a status rewritten): the Deployment of a component
  // since dropped, still labelled the instance's.
  auto seed = [](FakeCluster& cluster) {
    installed(cluster, {owned("v1", "ServiceAccount", "flux-system", "dropped")});
    cluster.put(owned("apps/v1", "Deployment", "flux-system", "image-reflector-controller"));
  };
  instance::FluxInstance flux =
      instance::testing::load(std::string(instance::testing::kMinimal) + "  wait: false\n");
  FakeCluster planned(/*dry_run=*/true);
  seed(planned);
  InstanceDiff diff = diff_instance(planned, flux, rendered());
  CHECK(diff.text.find("prune Deployment/flux-system/image-reflector-controller\n") !=
        std::string::npos);

  Run run;
  seed(run.cluster);
  run.apply("  wait: false\n");
  CHECK_FALSE(run.cluster.objects.contains("Deployment/flux-system/image-reflector-controller"));
  CHECK_FALSE(run.cluster.objects.contains("ServiceAccount/flux-system/dropped"));
  CHECK(run.ready() == "True ReconciliationSucceeded");
}

TEST_CASE("policy: diff refuses a second FluxInstance with apply's reason") {
  FakeCluster planned(/*dry_run=*/true);
  serve_fluxinstances(planned);
  planned.put({{"apiVersion", "fluxcd.controlplane.io/v1"},
               {"kind", "FluxInstance"},
               {"metadata", {{"name", "flux"}, {"namespace", "other"}}}});
  instance::FluxInstance flux =
      instance::testing::load(std::string(instance::testing::kMinimal) + "  wait: false\n");
  CHECK_THROWS_WITH_AS(diff_instance(planned, flux, rendered()),
                       doctest::Contains("FluxInstance other/flux already manages Flux on this "
                                         "cluster; there can be only one"),
                       Error);
  CHECK(planned.logged("APPLY").empty());
}

TEST_CASE("policy: a custom resource the same prune deletes is not counted as kept") {
  using namespace prunes;
  // kustomize-controller and the sync dropped in one apply: the sync's
  // Kustomization goes, the user's stays and keeps the CRD.
  Run run;
  run.cluster.served.insert("kustomize.toolkit.fluxcd.io/v1/Kustomization");
  json crd = owned("apiextensions.k8s.io/v1", "CustomResourceDefinition", "",
                   "kustomizations.kustomize.toolkit.fluxcd.io");
  crd["spec"] = {{"group", "kustomize.toolkit.fluxcd.io"},
                 {"names", {{"kind", "Kustomization"}, {"plural", "kustomizations"}}},
                 {"versions", {{{"name", "v1"}, {"served", true}, {"storage", true}}}}};
  installed(run.cluster, {crd, owned("kustomize.toolkit.fluxcd.io/v1", "Kustomization",
                                     "flux-system", "flux-system")});
  run.cluster.put(users("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "apps", "apps"));
  ApplyResult result = run.apply("  wait: false\n");
  std::string said =
      "CustomResourceDefinition/kustomizations.kustomize.toolkit.fluxcd.io kept: "
      "1 Kustomization (apps: 1) remains; apply --prune-crds deletes them with it";
  CHECK(run.said("warning: " + said));
  CHECK(result.message.ends_with("; " + said));
  CHECK_FALSE(run.cluster.objects.contains("Kustomization/flux-system/flux-system"));
}

TEST_CASE("policy: --prune-crds releases the custom resources, then deletes their CRD") {
  using namespace prunes;
  Run run;
  run.cluster.served.insert("helm.toolkit.fluxcd.io/v2/HelmRelease");
  installed(run.cluster, {helmrelease_crd()});
  run.cluster.put(users("helm.toolkit.fluxcd.io/v2", "HelmRelease", "apps", "podinfo"));
  // Made after a diff: it goes too, released.
  run.cluster.put(users("helm.toolkit.fluxcd.io/v2", "HelmRelease", "team-b", "api"));
  run.options.prune_crds = true;
  const std::string crd = "CustomResourceDefinition/helmreleases.helm.toolkit.fluxcd.io";
  ApplyResult result = run.apply("  wait: false\n");
  std::vector<std::string> log = run.cluster.requests_log;
  std::size_t deleted = prunes::index_of(log, "DELETE " + crd);
  REQUIRE(deleted < log.size());
  for (const char* name : {"HelmRelease/apps/podinfo", "HelmRelease/team-b/api"}) {
    CHECK(prunes::index_of(log, std::string("PATCH ") + name) < deleted);
    const json& object = run.cluster.objects.at(name);  // the fake deletes no CRs with a CRD
    CHECK_FALSE(object["metadata"].contains("finalizers"));
    CHECK(object["spec"]["suspend"] == true);
  }
  CHECK(std::any_of(result.changes.begin(), result.changes.end(), [&](const ssa::Change& change) {
    return ssa::change_line(change) == crd + " deleted";
  }));
}

TEST_CASE("policy: a generated Kustomization is pruned without its effects, suspended first") {
  using namespace prunes;
  auto seed = [](FakeCluster& cluster) {
    cluster.served.insert("kustomize.toolkit.fluxcd.io/v1/Kustomization");
    cluster.served.insert("source.toolkit.fluxcd.io/v1/GitRepository");
    json kustomization =
        owned("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "flux-system");
    kustomization["metadata"]["finalizers"] = {"finalizers.fluxcd.io"};
    kustomization["spec"] = {{"prune", true}, {"path", "./clusters/one"}};
    kustomization["status"]["inventory"] =
        inventory_json({{"apps", "v1", "Deployment", "apps", "podinfo"},
                        {"", "v1", "Service", "apps", "podinfo"},
                        {"apps", "v1", "Deployment", "team-b", "api"}});
    json source =
        owned("source.toolkit.fluxcd.io/v1", "GitRepository", "flux-system", "flux-system");
    source["metadata"]["finalizers"] = {"finalizers.fluxcd.io"};
    installed(cluster, {source, kustomization});
  };
  instance::FluxInstance flux =
      instance::testing::load(std::string(instance::testing::kMinimal) + "  wait: false\n");
  const std::string name = "Kustomization/flux-system/flux-system";

  FakeCluster planned(/*dry_run=*/true);
  seed(planned);
  InstanceDiff diff = diff_instance(planned, flux, rendered());
  CHECK(diff.text.find("prune " + name +
                       " without its effects (suspended, its finalizers removed): what it applied "
                       "stays, 2 Deployment (apps: 1, team-b: 1), 1 Service (apps: 1)\n") !=
        std::string::npos);
  json entry = diff_entry(diff_json(diff), name);
  CHECK(entry["action"] == "delete");
  CHECK(entry["takes"] == json::array());
  CHECK(entry["keeps"].size() == 3);

  Run run;
  seed(run.cluster);
  run.cluster.stuck.insert(name);  // deleted, it would stay while its finalizer does
  run.apply("  wait: false\n");
  std::vector<std::string> log = run.cluster.requests_log;
  for (const std::string& object : {name, std::string("GitRepository/flux-system/flux-system")}) {
    std::size_t deleted = prunes::index_of(log, "DELETE " + object);
    REQUIRE(deleted < log.size());
    CHECK(prunes::index_of(log, "PATCH " + object) < deleted);
  }
  // Released before its deletion: nothing holds it, kustomize-controller
  // (suspended) collects nothing.
  const json& left = run.cluster.objects.at(name);
  CHECK(left["spec"]["suspend"] == true);
  CHECK_FALSE(left["metadata"].contains("finalizers"));
}

TEST_CASE("policy: an applied object being deleted is not healthy: HealthCheckFailed, diff says") {
  Run run;
  run.apply("  wait: false\n");
  json& deployment = run.cluster.objects.at("Deployment/flux-system/source-controller");
  deployment["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  deployment["metadata"]["finalizers"] = {"example.com/hold"};
  CHECK_THROWS_WITH_AS(run.apply("  wait: false\n"),
                       doctest::Contains("being deleted, so not healthy until it is gone and "
                                         "applied again: Deployment/flux-system/source-controller "
                                         "(finalizers: example.com/hold)"),
                       ReconcileError);
  CHECK(run.ready() == "False HealthCheckFailed");

  FakeCluster planned(/*dry_run=*/true);
  planned.served = run.cluster.served;
  planned.objects = run.cluster.objects;
  instance::FluxInstance flux =
      instance::testing::load(std::string(instance::testing::kMinimal) + "  wait: false\n");
  InstanceDiff diff = diff_instance(planned, flux, rendered());
  CHECK(diff.text.find("terminating Deployment/flux-system/source-controller (being deleted; "
                       "finalizers: example.com/hold): apply waits until it is gone, then "
                       "applies it again\n") != std::string::npos);
  CHECK(prunes::diff_entry(diff_json(diff),
                           "Deployment/flux-system/source-controller")["terminating"] ==
        "finalizers: example.com/hold");
  CHECK(diff.changed > 0);
}

TEST_CASE("policy: an applied object being deleted is waited for until gone, then applied again") {
  Run run;
  run.apply("  wait: false\n");
  const std::string name = "Deployment/flux-system/source-controller";
  json& deployment = run.cluster.objects.at(name);
  deployment["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  deployment["metadata"]["finalizers"] = {"kubernetes.io/example-protection"};
  // Its finalizer let go while the apply waits: gone at the second look.
  int looks = 0;
  run.cluster.on_list = [&](const kube::ListQuery& query) {
    if (query.kind.kind == "Deployment" && query.name == "source-controller" && ++looks == 2)
      run.cluster.objects.erase(name);
  };
  ApplyResult result = run.apply("  wait: false\n");
  CHECK(result.message.starts_with("Reconciliation finished in"));
  CHECK(run.ready() == "True ReconciliationSucceeded");
  CHECK(
      run.said("waiting for what is being deleted, so not healthy until it is gone and applied "
               "again: Deployment/flux-system/source-controller (finalizers: "
               "kubernetes.io/example-protection)"));
  CHECK(looks >= 2);
  REQUIRE(run.cluster.objects.contains(name));
  CHECK_FALSE(run.cluster.objects.at(name)["metadata"].contains("deletionTimestamp"));
}

TEST_CASE("policy: diff refuses a downgrade in apply's words") {
  FakeCluster planned(/*dry_run=*/true);
  prunes::installed(planned, {});
  planned.objects.at("FluxInstance/flux-system/flux")["status"]["lastAppliedRevision"] =
      "v2.10.1@sha256:0123";
  instance::FluxInstance flux =
      instance::testing::load(std::string(instance::testing::kMinimal) + "  wait: false\n");
  CHECK_THROWS_WITH_AS(diff_instance(planned, flux, rendered()),
                       "instance.yaml: .spec.distribution.version: downgrading from v2.10.1 to "
                       "v2.9.0 is not supported, reinstall needed",
                       Error);
}

TEST_CASE("policy: a lost inventory is found again by the objects' labels") {
  using namespace prunes;
  auto seed = [](FakeCluster& cluster) {
    installed(cluster, {});
    // Applied before by the instance (its labels), no longer rendered, and
    // the inventory lost: a Service, and the rendered Deployment.
    cluster.put(owned("v1", "Service", "flux-system", "old-controller"));
    cluster.put(owned("apps/v1", "Deployment", "flux-system", "source-controller"));
    cluster.objects.at("FluxInstance/flux-system/flux")["status"].erase("inventory");
  };
  instance::FluxInstance flux =
      instance::testing::load(std::string(instance::testing::kMinimal) + "  wait: false\n");
  FakeCluster planned(/*dry_run=*/true);
  seed(planned);
  InstanceDiff diff = diff_instance(planned, flux, rendered());
  CHECK(diff.text.find("prune Service/flux-system/old-controller\n") != std::string::npos);

  Run run;
  seed(run.cluster);
  run.apply("  wait: false\n");
  CHECK(run.said("has no inventory, but objects labelled its"));
  CHECK(run.cluster.logged("DELETE") ==
        std::vector<std::string>{"Service/flux-system/old-controller"});
}

TEST_CASE("policy: a first install has no lost inventory to speak of") {
  Run run;
  run.apply("  wait: false\n");
  CHECK_FALSE(run.said("has no inventory"));
}

}  // namespace
}  // namespace fluxop::reconcile
