// Two reconcilers of one FluxInstance on a cluster in memory: a render of
// another generation than the one found once the Lease is held, the Lease
// lost before a status write, the status moved by another writer, a Lease
// that is never released, and what tells that something answers a request.
#include <doctest/doctest.h>

#include <ctime>
#include <functional>
#include <thread>

#include "../instance/support.h"
#include "../kube/fake_cluster.h"
#include "core/error.h"
#include "core/file.h"
#include "core/kube/lease.h"
#include "core/reconcile/apply.h"
#include "core/reconcile/instance_requests.h"
#include "core/reconcile/lease_lock.h"
#include "core/yaml/parse.h"

namespace fluxop::reconcile {
namespace {

using nlohmann::json;
using testing::FakeCluster;

constexpr std::string_view kLease = "Lease/flux-system/fluxopctl-flux";
constexpr std::string_view kInstance = "FluxInstance/flux-system/flux";

json lease(const std::string& holder, std::chrono::system_clock::time_point renewed, int seconds) {
  std::string time = kube::micro_time(renewed);
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", {{"name", "fluxopctl-flux"}, {"namespace", "flux-system"}}},
          {"spec",
           {{"holderIdentity", holder},
            {"leaseDurationSeconds", seconds},
            {"acquireTime", time},
            {"renewTime", time}}}};
}

// The daemon's view: the instance read from the cluster at generation 2,
// rendered into one Deployment.
struct Daemon {
  FakeCluster cluster;
  ApplyOptions options;
  std::vector<InstanceEvent> events;
  std::vector<std::string> progress;
  instance::FluxInstance flux =
      instance::testing::load(std::string(instance::testing::kMinimal) + "  wait: false\n");
  render::Rendered rendered{*distribution::parse_version("v2.9.0"),
                            "v2.9.0@sha256:0123",
                            yaml::parse_documents(R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: source-controller
  namespace: flux-system
  labels: {fluxcd.controlplane.io/name: flux, fluxcd.controlplane.io/namespace: flux-system}
spec:
  replicas: 1
)",
                                                  "rendered.yaml"),
                            {}};

  Daemon() {
    cluster.served.insert("fluxcd.controlplane.io/v1/FluxInstance");
    cluster.put(
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "flux-system"}}}});
    cluster.put(
        {{"apiVersion", "fluxcd.controlplane.io/v1"},
         {"kind", "FluxInstance"},
         {"metadata", {{"name", "flux"}, {"namespace", "flux-system"}, {"generation", 2}}},
         {"spec", {{"distribution", {{"version", "2.9.x"}, {"registry", "ghcr.io/fluxcd"}}}}}});
    options.instance_from_cluster = true;
    options.generation = 2;
    options.timeout = std::chrono::seconds(5);
    options.on_event = [this](const InstanceEvent& event) { events.push_back(event); };
    options.on_progress = [this](const std::string& line) { progress.push_back(line); };
  }
  ApplyResult apply() { return apply_instance(cluster, flux, rendered, options); }
  json& instance() { return cluster.objects.at(std::string(kInstance)); }
  std::string ready() {
    for (const json& condition : instance()["status"].value("conditions", json::array()))
      if (condition["type"] == "Ready")
        return condition["status"].get<std::string>() + " " +
               condition["reason"].get<std::string>();
    return "";
  }
  bool event(std::string_view reason) const {
    return std::any_of(events.begin(), events.end(),
                       [&](const InstanceEvent& e) { return name(e.reason) == reason; });
  }
};

TEST_CASE("contention: a render of another generation than the live one is not applied") {
  Daemon daemon;
  daemon.options.generation = 1;  // rendered before the spec changed
  CHECK_THROWS_AS(daemon.apply(), StaleRender);
  // Nothing rendered (fluxopctl's own FluxInstance CRD is no render's).
  for (const std::string& applied : daemon.cluster.logged("APPLY"))
    CHECK(applied == "CustomResourceDefinition/fluxinstances.fluxcd.controlplane.io");
  CHECK(daemon.cluster.logged("STATUS").empty());
  CHECK(daemon.events.empty());
  // The Lease is free for the render of generation 2.
  CHECK(daemon.cluster.objects.at(std::string(kLease))["spec"]["holderIdentity"] == "");
  daemon.options.generation = 2;
  daemon.apply();
  CHECK(daemon.ready() == "True ReconciliationSucceeded");
}

TEST_CASE("contention: an apply whose Lease was taken while it was stopped writes nothing") {
  Daemon daemon;
  // Another apply takes the Lease as the first object is applied; this one
  // is then stopped (SIGTERM): its failure is not written over the other's.
  std::string stopped;
  std::size_t before = 0;
  json thief = lease("thief/1", std::chrono::system_clock::now(), 30);
  daemon.cluster.on_apply = [&](const json& object) {
    if (object.value("kind", "") != "Deployment" || !stopped.empty()) return;
    before = daemon.cluster.logged("STATUS").size();
    json& held = daemon.cluster.objects.at(std::string(kLease));
    held["spec"] = thief["spec"];
    held["metadata"]["resourceVersion"] = "100";
    stopped = "interrupted by SIGTERM";
  };
  daemon.options.interruption = [&] { return stopped; };
  CHECK_THROWS_AS(daemon.apply(), ReconcileError);
  CHECK(daemon.cluster.logged("STATUS").size() == before);
  CHECK_FALSE(daemon.event("HealthCheckFailed"));
  // One Event says who took the Lease; the outcome is not written.
  auto lost = std::find_if(daemon.events.begin(), daemon.events.end(), [](const auto& event) {
    return event.message.find("lost to another apply (held by thief/1 since ") != std::string::npos;
  });
  REQUIRE(lost != daemon.events.end());
  CHECK(name(lost->reason) == "ReconciliationFailed");
  CHECK(std::count_if(daemon.events.begin(), daemon.events.end(), [](const auto& event) {
          return name(event.reason) == "ReconciliationFailed";
        }) == 1);
  CHECK(daemon.cluster.objects.at(std::string(kLease))["spec"]["holderIdentity"] == "thief/1");
}

TEST_CASE("contention: a Lease taken during the apply's wait: no Ready written, the holder said") {
  Daemon daemon;
  // Taken by hand, renewed an hour ahead, between the apply and its last
  // status write, a wait of more than a second later (within a third of the
  // Lease's duration: no renewal due).
  std::size_t before = 0;
  daemon.cluster.on_apply = [&](const json& object) {
    if (object.value("kind", "") != "Deployment") return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    before = daemon.cluster.logged("STATUS").size();
    json& held = daemon.cluster.objects.at(std::string(kLease));
    held["spec"] =
        lease("thief/2", std::chrono::system_clock::now() + std::chrono::hours(1), 30)["spec"];
    held["metadata"]["resourceVersion"] = "100";
  };
  CHECK_THROWS_WITH_AS(daemon.apply(), doctest::Contains("lost to another apply (held by thief/2"),
                       Error);
  CHECK(daemon.cluster.logged("STATUS").size() == before);
  CHECK(daemon.ready() != "True ReconciliationSucceeded");
  CHECK(daemon.event("ReconciliationFailed"));
  CHECK_FALSE(daemon.event("ReconciliationSucceeded"));
}

// Another writer moves the instance before the apply's first status write.
void move_once(Daemon& daemon, std::function<void(json&)> edit) {
  daemon.cluster.before_status = [edit = std::move(edit), moved = false](json& live) mutable {
    if (moved) return;
    moved = true;
    edit(live);
    live["metadata"]["resourceVersion"] = "50";
  };
}

TEST_CASE("contention: the status is written onto the instance as read, a moved one read again") {
  Daemon requested;
  // A user's request: written again, no warning.
  move_once(requested, [](json& live) {
    live["metadata"]["annotations"] = {{"reconcile.fluxcd.io/requestedAt", "t1"}};
  });
  requested.apply();
  CHECK(requested.ready() == "True ReconciliationSucceeded");
  CHECK_FALSE(requested.event("ControllerConflict"));

  // Another controller's status: a warning, then written.
  Daemon other;
  move_once(other, [](json& live) { live["status"] = {{"lastAttemptedRevision", "another"}}; });
  other.apply();
  CHECK(other.ready() == "True ReconciliationSucceeded");
  CHECK(other.event("ControllerConflict"));
  CHECK(std::any_of(other.progress.begin(), other.progress.end(), [](const std::string& line) {
    return line.find("written by another controller") != std::string::npos;
  }));
}

TEST_CASE("contention: a Lease held elsewhere is said on the instance: who and since when") {
  Daemon daemon;
  daemon.apply();
  daemon.cluster.put(
      lease("thief/1", std::chrono::system_clock::now() + std::chrono::hours(1), 3600));
  daemon.options.lock_timeout = std::chrono::seconds(0);
  CHECK_THROWS_WITH_AS(daemon.apply(), doctest::Contains("held by thief/1 since"), ReconcileError);
  CHECK(daemon.ready() == "False ReconciliationFailed");
  std::string message = daemon.instance()["status"]["conditions"].dump();
  CHECK(message.find("held by thief/1 since") != std::string::npos);
  REQUIRE(daemon.event("ReconciliationFailed"));
  CHECK(event_type(daemon.events.back().reason) == EventType::warning);
  CHECK(daemon.events.back().message.find("held by thief/1 since") != std::string::npos);
}

TEST_CASE("contention: a Lease renewed in the future is taken once unchanged for its duration") {
  FakeCluster cluster;
  cluster.put(lease("stuck/1", std::chrono::system_clock::now() + std::chrono::hours(1), 1));
  LeaseLock lock(cluster, "flux-system", "fluxopctl-flux", nullptr);
  CHECK_FALSE(lock.acquire(std::chrono::seconds(10),
                           cluster.get(kube::lease_key("flux-system", "fluxopctl-flux"))));
  CHECK(lock.held());
  CHECK(cluster.objects.at(std::string(kLease))["spec"]["holderIdentity"] ==
        kube::process_identity());
}

TEST_CASE("contention: what reconciles an instance: a Lease renewed, an operator with replicas") {
  FakeCluster cluster;
  CHECK(find_reconciler(cluster, "flux-system") == "");
  json expired = lease("gone/1", std::chrono::system_clock::now() - std::chrono::minutes(5), 30);
  expired["metadata"]["name"] = "flux-operator";
  cluster.put(expired);
  CHECK(find_reconciler(cluster, "flux-system") == "");
  json operator_deployment = {{"apiVersion", "apps/v1"},
                              {"kind", "Deployment"},
                              {"metadata",
                               {{"name", "flux-operator"},
                                {"namespace", "flux-system"},
                                {"labels", {{"app.kubernetes.io/name", "flux-operator"}}}}},
                              {"spec", {{"replicas", 0}}}};
  cluster.put(operator_deployment);
  CHECK(find_reconciler(cluster, "flux-system") == "");
  CHECK(running_operators(cluster, "flux-system").empty());
  operator_deployment["spec"]["replicas"] = 1;
  cluster.put(operator_deployment);
  CHECK(find_reconciler(cluster, "flux-system") == "Deployment/flux-system/flux-operator");
  CHECK(running_operators(cluster, "flux-system") ==
        std::vector<std::string>{"Deployment/flux-system/flux-operator"});
  json watching = lease("host_1", std::chrono::system_clock::now(), 35);
  watching["metadata"]["name"] = "fluxopctl.watch";
  cluster.put(watching);
  CHECK(find_reconciler(cluster, "flux-system") ==
        "Lease/flux-system/fluxopctl.watch (held by host_1)");
  cluster.refuse_list.emplace("coordination.k8s.io/v1/Lease",
                              kube::ApiError("leases is forbidden", 403, "Forbidden"));
  CHECK_FALSE(find_reconciler(cluster, "flux-system").has_value());
}

}  // namespace
}  // namespace fluxop::reconcile
