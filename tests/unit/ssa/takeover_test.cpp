#include "core/ssa/takeover.h"

#include <doctest/doctest.h>

namespace fluxop::ssa {
namespace {

using nlohmann::json;

TEST_CASE("takeover: other tools' annotations, labels and managers are removed") {
  json live = {{"metadata",
                {{"resourceVersion", "42"},
                 {"annotations",
                  {{"kubectl.kubernetes.io/last-applied-configuration", "{}"},
                   {"meta.helm.sh/release-name", "flux"},
                   {"keep/me", "x"}}},
                 {"labels",
                  {{"kustomize.toolkit.fluxcd.io/name", "flux-system"},
                   {"app.kubernetes.io/managed-by", "Helm"},
                   {"app.kubernetes.io/part-of", "flux"}}},
                 {"managedFields",
                  {{{"manager", "kubectl"}, {"operation", "Apply"}},
                   {{"manager", "flux-operator"}, {"operation", "Apply"}},
                   {{"manager", "before-first-apply"}, {"operation", "Update"}}}}}}};
  json patch = takeover_patch(live, "flux-operator");
  REQUIRE(patch.is_array());
  json metadata = live.patch(patch)["metadata"];
  CHECK(metadata["annotations"] == json{{"keep/me", "x"}});
  CHECK(metadata["labels"] == json{{"app.kubernetes.io/part-of", "flux"}});
  CHECK(metadata["managedFields"] ==
        json::array({{{"manager", "flux-operator"}, {"operation", "Apply"}}}));
  CHECK(metadata["resourceVersion"] == "42");
}

const json kDeployment = json::parse(R"({"apiVersion": "apps/v1", "metadata": {
    "resourceVersion": "9",
    "managedFields": [
      {"manager": "flux-operator", "operation": "Apply", "apiVersion": "apps/v1",
       "fieldsV1": {"f:spec": {"f:replicas": {}}}},
      {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
       "time": "2026-11-25T10:00:00Z", "fieldsV1": {"f:status": {"f:replicas": {}}}},
      {"manager": "kubectl-edit", "operation": "Update",
       "fieldsV1": {"f:spec": {"f:paused": {}}}},
      {"manager": "before-first-apply", "operation": "Update",
       "fieldsV1": {"f:spec": {"f:minReadySeconds": {}}, "f:status": {"f:replicas": {}}}},
      {"manager": "kubectl-rollout", "operation": "Update",
       "fieldsV1": {"f:spec": {"f:template": {}}}}]}})");

TEST_CASE("takeover: the fields of other tools and hand edits pass to the manager") {
  json patch = takeover_patch(kDeployment, "flux-operator");
  REQUIRE(patch.is_array());
  json expected = json::parse(R"([
      {"manager": "flux-operator", "operation": "Apply", "apiVersion": "apps/v1",
       "fieldsType": "FieldsV1",
       "fieldsV1": {"f:spec": {"f:replicas": {}, "f:paused": {}, "f:minReadySeconds": {}}}},
      {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
       "time": "2026-11-25T10:00:00Z", "fieldsV1": {"f:status": {"f:replicas": {}}}},
      {"manager": "kubectl-rollout", "operation": "Update",
       "fieldsV1": {"f:spec": {"f:template": {}}}}])");
  CHECK(kDeployment.patch(patch)["metadata"]["managedFields"] == expected);
}

TEST_CASE("takeover: a status write in between neither fails the patch nor is written back") {
  json patch = takeover_patch(kDeployment, "flux-operator");
  json moved = kDeployment;
  moved["metadata"]["resourceVersion"] = "10";
  json& status_entry = moved["metadata"]["managedFields"][1];
  status_entry["time"] = "2026-11-25T10:00:01Z";
  status_entry["fieldsV1"]["f:status"]["f:conditions"] = json::object();
  json after = moved.patch(patch)["metadata"]["managedFields"];
  REQUIRE(after.size() == 3);
  CHECK(after[1] == status_entry);
  CHECK(after[0]["fieldsV1"]["f:spec"].contains("f:paused"));
}

TEST_CASE("takeover: an edited entry that changed or moved in between fails the patch") {
  json patch = takeover_patch(kDeployment, "flux-operator");
  json changed = kDeployment;
  changed["metadata"]["managedFields"][2]["fieldsV1"]["f:spec"]["f:strategy"] = json::object();
  CHECK_THROWS_AS(changed.patch(patch), json::exception);
  json moved = kDeployment;
  std::swap(moved["metadata"]["managedFields"][1], moved["metadata"]["managedFields"][2]);
  CHECK_THROWS_AS(moved.patch(patch), json::exception);
  // Applied once, it fails a second time: nothing is done twice.
  CHECK_THROWS_AS(kDeployment.patch(patch).patch(patch), json::exception);
}

TEST_CASE("takeover: an object kubectl alone manages has its managed fields cleared") {
  json live = {{"metadata",
                {{"resourceVersion", "7"},
                 {"managedFields", {{{"manager", "kubectl"}, {"operation", "Apply"}}}}}}};
  json patch = takeover_patch(live, "flux-operator");
  REQUIRE(patch.is_array());
  CHECK(live.patch(patch)["metadata"]["managedFields"] == json::array({json::object()}));
}

TEST_CASE("takeover: nothing to do gives null") {
  json live = {{"metadata",
                {{"resourceVersion", "1"},
                 {"labels", {{"app.kubernetes.io/managed-by", "flux-operator"}}},
                 {"managedFields", {{{"manager", "flux-operator"}}}}}}};
  CHECK(takeover_patch(live, "flux-operator").is_null());
  CHECK(takeover_patch(json::object(), "flux-operator").is_null());
}

}  // namespace
TEST_CASE("takeover: a Namespace's fields stay their managers': what others label it with stays") {
  json live = json::parse(R"({"apiVersion": "v1", "kind": "Namespace", "metadata": {
    "name": "flux-system",
    "labels": {"pod-security.kubernetes.io/enforce": "restricted",
               "kustomize.toolkit.fluxcd.io/name": "flux-system"},
    "managedFields": [
      {"manager": "fluxopctl", "operation": "Apply", "apiVersion": "v1",
       "fieldsV1": {"f:metadata": {"f:labels": {"f:app.kubernetes.io/part-of": {}}}}},
      {"manager": "kubectl-label", "operation": "Update", "apiVersion": "v1",
       "fieldsV1": {"f:metadata": {"f:labels": {"f:pod-security.kubernetes.io/enforce": {}}}}}]}})");
  json patch = takeover_patch(live, "fluxopctl");
  REQUIRE(patch.is_array());
  json metadata = live.patch(patch)["metadata"];
  // Flux bootstrap's bookkeeping goes; kubectl's label and its ownership stay.
  CHECK(metadata["labels"] == json{{"pod-security.kubernetes.io/enforce", "restricted"}});
  CHECK(metadata["managedFields"] == live["metadata"]["managedFields"]);
  CHECK(fields_after_takeover(live, "fluxopctl") ==
        json::parse(R"({"f:metadata": {"f:labels": {"f:app.kubernetes.io/part-of": {}}}})"));
  CHECK(foreign_tool(live) == "flux bootstrap");
  live["metadata"]["labels"].erase("kustomize.toolkit.fluxcd.io/name");
  CHECK(takeover_patch(live, "fluxopctl").is_null());
  CHECK(foreign_tool(live).empty());
}

TEST_CASE("takeover: the manager's own edit of a Flux object passes to its apply, undone by it") {
  // The sync's Kustomization suspended by a prune whose delete then failed:
  // the suspension is the manager's Update, which its apply never owned.
  json live = json::parse(R"({"apiVersion": "kustomize.toolkit.fluxcd.io/v1",
    "kind": "Kustomization", "metadata": {"name": "flux-system", "namespace": "flux-system",
    "managedFields": [
      {"manager": "fluxopctl", "operation": "Apply", "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
       "fieldsV1": {"f:spec": {"f:interval": {}}}},
      {"manager": "fluxopctl", "operation": "Update", "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
       "fieldsV1": {"f:spec": {"f:suspend": {}}}},
      {"manager": "flux-client-side-apply", "operation": "Update",
       "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
       "fieldsV1": {"f:metadata": {"f:annotations": {"f:reconcile.fluxcd.io/requestedAt": {}}}}}]},
    "spec": {"interval": "10m", "suspend": true}})");
  json patch = takeover_patch(live, "fluxopctl");
  REQUIRE(patch.is_array());
  json entries = live.patch(patch)["metadata"]["managedFields"];
  REQUIRE(entries.size() == 2);
  CHECK(entries[0]["operation"] == "Apply");
  CHECK(entries[0]["fieldsV1"] ==
        json::parse(R"({"f:spec": {"f:interval": {}, "f:suspend": {}}})"));
  // Another client's edit (a reconcile request of the flux CLI) stays its own.
  CHECK(entries[1]["manager"] == "flux-client-side-apply");
  // The same edit outside a Flux object (the FluxInstance's finalizer) stays.
  live["apiVersion"] = "fluxcd.controlplane.io/v1";
  live["kind"] = "FluxInstance";
  live["metadata"]["managedFields"].erase(2);
  CHECK(takeover_patch(live, "fluxopctl").is_null());
}

TEST_CASE("takeover: a reconcile request stays its writer's, the rest of its edit passes") {
  // `kubectl annotate ... reconcile.fluxcd.io/requestedAt=...` (Flux's
  // documented way to ask for a run), and a label by the same command.
  nlohmann::json live = nlohmann::json::parse(R"({"apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "OCIRepository", "metadata": {"name": "flux-system", "namespace": "flux-system",
    "annotations": {"reconcile.fluxcd.io/requestedAt": "1"}, "labels": {"team": "a"},
    "managedFields": [
      {"manager": "fluxopctl", "operation": "Apply", "apiVersion": "source.toolkit.fluxcd.io/v1",
       "fieldsV1": {"f:spec": {"f:interval": {}}}},
      {"manager": "kubectl-annotate", "operation": "Update",
       "apiVersion": "source.toolkit.fluxcd.io/v1",
       "fieldsV1": {"f:metadata": {
         "f:annotations": {".": {}, "f:reconcile.fluxcd.io/requestedAt": {}},
         "f:labels": {".": {}, "f:team": {}}}}}]}})");
  nlohmann::json patch = takeover_patch(live, "fluxopctl");
  REQUIRE(patch.is_array());
  nlohmann::json taken = live.patch(patch);
  nlohmann::json entries = taken["metadata"]["managedFields"];
  REQUIRE(entries.size() == 2);
  CHECK(entries[0]["fieldsV1"] == nlohmann::json::parse(R"({"f:spec": {"f:interval": {}},
    "f:metadata": {"f:labels": {".": {}, "f:team": {}}}})"));
  CHECK(entries[1]["manager"] == "kubectl-annotate");
  CHECK(entries[1]["fieldsV1"] == nlohmann::json::parse(R"({"f:metadata": {"f:annotations": {
    "f:reconcile.fluxcd.io/requestedAt": {}}}})"));
  CHECK(fields_after_takeover(live, "fluxopctl") == entries[0]["fieldsV1"]);
  // Once only the request is left, there is nothing to take over.
  CHECK(takeover_patch(taken, "fluxopctl").is_null());
  CHECK(foreign_tool(taken).empty());
}

}  // namespace fluxop::ssa
