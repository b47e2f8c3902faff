#include "core/ssa/health.h"

#include <doctest/doctest.h>

namespace fluxop::ssa {
namespace {

using nlohmann::json;

json deployment(int generation, json status, int replicas = 1) {
  return {{"kind", "Deployment"},
          {"metadata", {{"generation", generation}}},
          {"spec", {{"replicas", replicas}}},
          {"status", status}};
}

json available(bool yes) {
  return {{"conditions",
           {{{"type", "Available"}, {"status", yes ? "True" : "False"}, {"message", "minimum"}}}}};
}

TEST_CASE("health: a Deployment is ready when observed, updated, old replicas gone, available") {
  json status = available(true);
  status.update({{"observedGeneration", 2},
                 {"replicas", 1},
                 {"updatedReplicas", 1},
                 {"availableReplicas", 1}});
  CHECK(object_health(deployment(2, status)).ready);

  CHECK(object_health(deployment(3, status)).message == "generation 3 not yet observed");
  json rolling = status;
  rolling["updatedReplicas"] = 0;
  CHECK(object_health(deployment(2, rolling)).message == "rollout: 0 of 1 updated");
  json terminating = status;
  terminating["replicas"] = 2;
  CHECK(object_health(deployment(2, terminating)).message == "1 old replicas pending termination");
  json unavailable = status;
  unavailable["availableReplicas"] = 0;
  CHECK(object_health(deployment(2, unavailable)).message == "0 of 1 replicas available");
  json condition_false = status;
  condition_false.update(available(false));
  CHECK_FALSE(object_health(deployment(2, condition_false)).ready);

  json stuck = status;
  stuck["conditions"].push_back(
      {{"type", "Progressing"}, {"reason", "ProgressDeadlineExceeded"}, {"message", "too slow"}});
  stuck["updatedReplicas"] = 0;
  Health health = object_health(deployment(2, stuck));
  CHECK(health.failed);
  CHECK(health.message == "too slow");

  // Scaled to zero: nothing to wait for.
  json zero = {{"observedGeneration", 1}};
  CHECK(object_health(deployment(1, zero, 0)).ready);
}

// What no wait changes fails at once, quoting the Deployment's own words.
TEST_CASE("health: a quota, a LimitRange or a paused rollout fail the wait at once") {
  json status = {{"observedGeneration", 1}, {"replicas", 0}, {"updatedReplicas", 0}};
  status["conditions"] =
      json::array({{{"type", "ReplicaFailure"},
                    {"status", "True"},
                    {"reason", "FailedCreate"},
                    {"message", "pods \"x\" is forbidden: exceeded quota: q, requested: pods=1"}}});
  Health quota = object_health(deployment(1, status));
  CHECK(quota.failed);
  CHECK(quota.message ==
        "FailedCreate: pods \"x\" is forbidden: exceeded quota: q, requested: pods=1");
  status["conditions"][0]["status"] = "False";
  CHECK_FALSE(object_health(deployment(1, status)).failed);

  json paused = deployment(1, {{"observedGeneration", 1}});
  paused["spec"]["paused"] = true;
  CHECK(object_health(paused).failed);
  CHECK(object_health(paused).message == "the rollout is paused (spec.paused)");
}

TEST_CASE("health: CRDs once established, other kinds once applied") {
  json crd = {{"kind", "CustomResourceDefinition"},
              {"status", {{"conditions", {{{"type", "Established"}, {"status", "True"}}}}}}};
  CHECK(object_health(crd).ready);
  crd["status"]["conditions"][0]["status"] = "False";
  CHECK_FALSE(object_health(crd).ready);
  CHECK_FALSE(object_health(json{{"kind", "CustomResourceDefinition"}}).ready);
  CHECK(object_health(json{{"kind", "ServiceAccount"}}).ready);
  CHECK(health_checked(json{{"apiVersion", "apps/v1"}, {"kind", "Deployment"}}));
  CHECK_FALSE(health_checked(json{{"apiVersion", "v1"}, {"kind", "Service"}}));
}

TEST_CASE("health: a Flux object by kstatus, with the cause its Ready condition says") {
  json sync = {{"apiVersion", "kustomize.toolkit.fluxcd.io/v1"},
               {"kind", "Kustomization"},
               {"metadata", {{"name", "flux-system"}, {"generation", 2}}}};
  CHECK(health_checked(sync));
  // No controller has touched it (nor with its CRD's default
  // observedGeneration -1): untouched, which Engine::wait gives a grace.
  CHECK_FALSE(object_health(sync).ready);
  CHECK(object_health(sync).untouched);
  sync["status"] = {{"observedGeneration", -1}};
  CHECK(object_health(sync).untouched);
  CHECK(object_health(sync).message == "not yet reconciled by its controller");
  sync["status"] = {{"observedGeneration", 1}};
  CHECK_FALSE(object_health(sync).ready);
  CHECK_FALSE(object_health(sync).untouched);
  CHECK(object_health(sync).message == "generation 2 not yet observed");
  // Its reconcile of generation 2 failing: the cause said.
  sync["status"]["conditions"] = {{{"type", "Ready"},
                                   {"status", "False"},
                                   {"reason", "OCIArtifactPullFailed"},
                                   {"message", "tag 'not-pushed' not found"}}};
  CHECK(object_health(sync).message ==
        "generation 2 not yet observed: OCIArtifactPullFailed: tag 'not-pushed' not found");
  // The operator's case: the source failing, the Kustomization retrying.
  sync["status"] = {
      {"observedGeneration", 2},
      {"conditions",
       {{{"type", "Ready"},
         {"status", "False"},
         {"reason", "ArtifactFailed"},
         {"message", "Source artifact not found, retrying in 30s"}},
        {{"type", "Reconciling"}, {"status", "True"}, {"message", "Reconciliation in progress"}}}}};
  Health reconciling = object_health(sync);
  CHECK_FALSE(reconciling.ready);
  CHECK_FALSE(reconciling.failed);
  CHECK(reconciling.message ==
        "reconciling: ArtifactFailed: Source artifact not found, retrying in 30s");
  sync["status"]["conditions"][1] = {
      {"type", "Stalled"}, {"status", "True"}, {"reason", "BuildFailed"}, {"message", "bad"}};
  CHECK(object_health(sync).failed);
  CHECK(object_health(sync).message == "stalled: BuildFailed: bad");
  sync["status"]["conditions"] = {{{"type", "Ready"},
                                   {"status", "True"},
                                   {"reason", "ReconciliationSucceeded"},
                                   {"message", "Applied revision: latest@sha256:1234"}}};
  CHECK(object_health(sync).ready);
  CHECK(object_health(sync).message == "Applied revision: latest@sha256:1234");
}

}  // namespace
}  // namespace fluxop::ssa
