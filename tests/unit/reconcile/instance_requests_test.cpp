// The requests of users through the instance's annotations, and what a wait
// for their answer makes of the instance.
#include "core/reconcile/instance_requests.h"

#include <doctest/doctest.h>

#include "../kube/fake_cluster.h"
#include "../recording_wait_status.h"
#include "core/error.h"
#include "core/reconcile/instance_object.h"

namespace fluxop::reconcile {
namespace {

using nlohmann::json;
using State = Readiness::State;

const kube::ObjectKey kRef{"fluxcd.controlplane.io", "v1", "FluxInstance", "flux-system", "flux"};

json instance(std::string ready, std::string reason = "ReconciliationSucceeded",
              std::int64_t observed = 2) {
  json object = json::parse(R"({
    "apiVersion": "fluxcd.controlplane.io/v1", "kind": "FluxInstance",
    "metadata": {"name": "flux", "namespace": "flux-system", "generation": 2},
    "status": {"lastHandledReconcileAt": "t1", "conditions": [
      {"type": "Ready", "message": "Reconciliation finished in 3s"}]}})");
  json& condition = object["status"]["conditions"][0];
  condition["status"] = ready;
  condition["reason"] = reason;
  condition["observedGeneration"] = observed;
  return object;
}

TEST_CASE("requests: request times are Go's RFC3339Nano in UTC") {
  using namespace std::chrono;
  system_clock::time_point at = system_clock::from_time_t(1795426500);  // 2026-11-23T09:35:00Z
  CHECK(request_time(at) == "2026-11-23T09:35:00Z");
  CHECK(request_time(at + nanoseconds(120'000'000)) == "2026-11-23T09:35:00.12Z");
  CHECK(request_time(at + nanoseconds(1)) == "2026-11-23T09:35:00.000000001Z");
}

TEST_CASE("requests: readiness as the upstream CLI reads it") {
  CHECK(instance_readiness(instance("True"), "").state == State::ready);
  CHECK(instance_readiness(instance("True"), "").message == "Reconciliation finished in 3s");
  CHECK(instance_readiness(instance("True"), "t1").state == State::ready);
  // Asked at another time: not handled yet.
  CHECK(instance_readiness(instance("True"), "t2").state == State::waiting);
  // An older generation's Ready says nothing of this one.
  CHECK(instance_readiness(instance("True", "x", 1), "").state == State::waiting);
  CHECK(instance_readiness(instance("Unknown", "Progressing"), "").state == State::waiting);
  Readiness failed = instance_readiness(instance("False", "HealthCheckFailed"), "");
  CHECK(failed.state == State::failed);
  CHECK(failed.message == "HealthCheckFailed: Reconciliation finished in 3s");
  CHECK(instance_readiness(instance("False", "HealthCheckCanceled"), "").state == State::waiting);
  json suspended = instance("True");
  suspended["metadata"]["annotations"] = {{"fluxcd.controlplane.io/reconcile", "Disabled"}};
  CHECK(instance_readiness(suspended, "").state == State::failed);
  CHECK(instance_readiness(suspended, "").message == "Reconciliation is disabled for flux");
  CHECK(instance_readiness(json::object(), "").state == State::waiting);
}

TEST_CASE("requests: an instance being deleted is a failure, its last Ready notwithstanding") {
  json deleting = instance("True");
  deleting["metadata"]["deletionTimestamp"] = "2026-01-02T03:04:05Z";
  Readiness readiness = instance_readiness(deleting, "");
  CHECK(readiness.state == State::failed);
  CHECK(readiness.message == "being deleted since 2026-01-02T03:04:05Z: uninstalling");
}

TEST_CASE("requests: annotations are added beside the others, at the version read") {
  testing::FakeCluster cluster;
  cluster.served.insert("fluxcd.controlplane.io/v1/FluxInstance");
  CHECK_THROWS_WITH_AS(annotate_instance(cluster, kRef, {{"a", "b"}}),
                       "FluxInstance/flux-system/flux: not found", Error);
  json live = instance("True");
  cluster.put(live);
  annotate_instance(cluster, kRef, {{std::string(kReconcileAnnotation), "disabled"}});
  annotate_instance(cluster, kRef,
                    {{std::string(kRequestedAtAnnotation), "t2"},
                     {std::string(kReconcileAnnotation), "enabled"}});
  CHECK(cluster.objects.at("FluxInstance/flux-system/flux")["metadata"]["annotations"] ==
        json({{"fluxcd.controlplane.io/reconcile", "enabled"},
              {"reconcile.fluxcd.io/requestedAt", "t2"}}));
  CHECK_FALSE(reconcile_disabled(cluster.objects.at("FluxInstance/flux-system/flux")));
}

TEST_CASE("requests: the annotations each request writes, and which one a reconciliation answers") {
  using Asked = InstanceRequest;
  CHECK(request_annotations(Asked::suspend, "t1", /*force=*/true) ==
        std::map<std::string, std::string>{{"fluxcd.controlplane.io/reconcile", "disabled"}});
  CHECK(request_annotations(Asked::reconcile, "t1", /*force=*/false) ==
        std::map<std::string, std::string>{{"reconcile.fluxcd.io/requestedAt", "t1"}});
  CHECK(request_annotations(Asked::reconcile, "t1", /*force=*/true) ==
        std::map<std::string, std::string>{{"reconcile.fluxcd.io/requestedAt", "t1"},
                                           {"reconcile.fluxcd.io/forceAt", "t1"}});
  CHECK(request_annotations(Asked::resume, "t1", /*force=*/false) ==
        std::map<std::string, std::string>{{"fluxcd.controlplane.io/reconcile", "enabled"},
                                           {"reconcile.fluxcd.io/requestedAt", "t1"}});
  CHECK_FALSE(request_answered(Asked::suspend));
  CHECK(request_answered(Asked::reconcile));
  CHECK(request_answered(Asked::resume));
  CHECK(request_done(Asked::suspend) == "suspended");
}

TEST_CASE("requests: nothing reconciles an instance with no operator, daemon or Lease beside it") {
  testing::FakeCluster cluster;
  std::string nothing = nothing_reconciles(cluster, kRef);
  CHECK(nothing.find("FluxInstance/flux-system/flux: nothing reconciles it") == 0);
  CHECK(nothing.find("fluxopctl apply --watch --from-cluster -n flux-system") != std::string::npos);
  cluster.put(json::parse(R"({"apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "flux-operator", "namespace": "flux-system",
                 "labels": {"app.kubernetes.io/name": "flux-operator"}},
    "spec": {"replicas": 1}, "status": {"replicas": 1}})"));
  CHECK(nothing_reconciles(cluster, kRef).empty());
}

TEST_CASE("requests: the exported instance keeps the spec and the user's metadata only") {
  json live = instance("True");
  live["metadata"]["labels"] = {{"fluxcd.controlplane.io/name", "flux"},
                                {"fluxcd.controlplane.io/namespace", "flux-system"},
                                {"team", "platform"}};
  live["metadata"]["annotations"] = {{"reconcile.fluxcd.io/requestedAt", "t1"},
                                     {"fluxcd.controlplane.io/reconcile", "disabled"}};
  live["metadata"]["uid"] = "u1";
  live["spec"] = {{"distribution", {{"version", "2.x"}}}};
  CHECK(
      exported_instance(live).dump() ==
      R"({"apiVersion":"fluxcd.controlplane.io/v1","kind":"FluxInstance","metadata":{"annotations":)"
      R"({"fluxcd.controlplane.io/reconcile":"disabled"},"labels":{"team":"platform"},"name":"flux",)"
      R"("namespace":"flux-system"},"spec":{"distribution":{"version":"2.x"}}})");
}

TEST_CASE("requests: a wait ends ready, failed, or at its deadline naming what is not ready") {
  testing::FakeCluster cluster;
  cluster.served.insert("fluxcd.controlplane.io/v1/FluxInstance");
  auto soon = [] { return std::chrono::steady_clock::now() + std::chrono::milliseconds(300); };
  cluster.put(instance("True"));
  CHECK(wait_ready(cluster, kRef, "", soon(), {}, nullptr) == "Reconciliation finished in 3s");

  cluster.put(instance("False", "BuildFailed"));
  CHECK_THROWS_WITH_AS(wait_ready(cluster, kRef, "", soon(), {}, nullptr),
                       "FluxInstance/flux-system/flux: BuildFailed: Reconciliation finished in 3s",
                       Error);

  json progressing = instance("Unknown", "Progressing");
  progressing["status"]["inventory"] = {
      {"entries", {{{"id", "flux-system_source-controller_apps_Deployment"}, {"v", "v1"}}}}};
  cluster.put(progressing);
  cluster.put({{"apiVersion", "apps/v1"},
               {"kind", "Deployment"},
               {"metadata", {{"name", "source-controller"}, {"namespace", "flux-system"}}},
               {"spec", {{"replicas", 1}}},
               {"status", {{"replicas", 1}}}});
  std::string error;
  testing::RecordingWaitStatus status;
  try {
    wait_ready(cluster, kRef, "", soon(), {}, &status);
  } catch (const Error& e) {
    error = e.what();
  }
  // Each poll told the status what the instance waits for.
  REQUIRE_FALSE(status.polls.empty());
  CHECK(status.polls.back().what == "FluxInstance/flux-system/flux to be ready");
  CHECK(status.polls.back().cause == "Progressing: Reconciliation finished in 3s");
  CHECK(status.ended == 1);
  CHECK(
      error.starts_with("timeout waiting for FluxInstance/flux-system/flux to be ready: "
                        "Progressing: Reconciliation finished in 3s; not ready: "
                        "Deployment/flux-system/source-controller ("));
}

}  // namespace
}  // namespace fluxop::reconcile

namespace fluxop::reconcile {
namespace {

TEST_CASE("conform_instance: what a hostile server sent of the wrong type is left out") {
  nlohmann::json live = nlohmann::json::parse(R"({
    "apiVersion": "fluxcd.controlplane.io/v1", "kind": "FluxInstance",
    "metadata": {"name": "flux", "generation": "two", "annotations": ["a"],
                 "labels": {"ok": "yes", "bad": 1}},
    "spec": {"distribution": {"version": "2.x", "registry": "ghcr.io/fluxcd"}},
    "status": {"conditions": [7, {"type": "Ready", "status": "True", "reason": {"x": 1},
                                  "message": "fine", "lastTransitionTime": "t"}],
               "lastAppliedRevision": {"x": 1}, "history": "none", "inventory": 3}})");
  std::optional<nlohmann::json> conformed = conform_instance(live);
  REQUIRE(conformed);
  const nlohmann::json& metadata = (*conformed)["metadata"];
  CHECK(metadata == nlohmann::json::parse(R"({"name": "flux", "labels": {"ok": "yes"}})"));
  const nlohmann::json& status = (*conformed)["status"];
  CHECK(status == nlohmann::json::parse(R"({"conditions": [{"type": "Ready", "status": "True",
      "message": "fine", "lastTransitionTime": "t"}]})"));
  CHECK((*conformed)["spec"] == live["spec"]);
  // An instance of the right shapes is kept whole.
  live["metadata"] = {{"name", "flux"}, {"generation", 2}};
  live["status"] = {{"lastAppliedRevision", "v2.7.0@sha256:abc"}};
  CHECK(conform_instance(live) == live);
  CHECK_FALSE(conform_instance(nlohmann::json::array()));
}

}  // namespace
}  // namespace fluxop::reconcile
