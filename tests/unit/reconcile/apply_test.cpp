// The FluxInstance policy on top of the engine, driven on a cluster in
// memory: the instance's own settings, refusals before anything is written,
// and diff and apply agreeing on what is pruned.
#include "core/reconcile/apply.h"

#include <doctest/doctest.h>

#include "../instance/support.h"
#include "../ssa/fake_cluster.h"
#include "core/error.h"
#include "core/reconcile/instance_diff.h"
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

render::Rendered rendered() {
  return {"v2.9.0", "v2.9.0@sha256:0123", yaml::parse_documents(kObjects, "rendered.yaml")};
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
  ApplyResult apply(std::string_view spec, std::string_view metadata = "") {
    std::string text(instance::testing::kMinimal);
    std::string_view name = "  name: flux\n";
    text.insert(text.find(name) + name.size(), metadata);
    return apply_instance(cluster, instance::testing::load(text + std::string(spec)), rendered(),
                          options);
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
  CHECK_THROWS_WITH_AS(run.apply(""), doctest::Contains("namespace flux-system is being deleted"),
                       Error);
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
  InstanceDiff diff = diff_instance(planned, flux, rendered(), false);
  CHECK(diff.text.find("prune ConfigMap/flux-system/old\n") != std::string::npos);
  CHECK(diff.text.find("kept") == std::string::npos);

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

}  // namespace
}  // namespace fluxop::reconcile
