#include "core/ssa/diagnosis.h"

#include <doctest/doctest.h>

namespace fluxop::ssa {
namespace {

using nlohmann::json;

// A pending Deployment whose pods mount the claim `data`, as the
// fixtures below find it in flux-system.
WorkloadState pending() {
  WorkloadState state;
  state.deployment = json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "source-controller", "namespace": "flux-system"},
    "spec": {"template": {"spec": {"volumes": [
      {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
      {"name": "tmp", "emptyDir": {}}]}}}})");
  state.ns = json::parse(R"({"metadata": {"name": "flux-system"}, "status": {"phase": "Active"}})");
  return state;
}

json pod(const std::string& name, json status) {
  return {{"metadata", {{"name", name}, {"uid", "uid-" + name}}}, {"status", std::move(status)}};
}

json claim(const std::string& phase, const std::string& storage_class) {
  json claim = {{"metadata", {{"name", "data"}, {"namespace", "flux-system"}, {"uid", "uid-data"}}},
                {"spec", json::object()},
                {"status", {{"phase", phase}}}};
  if (!storage_class.empty()) claim["spec"]["storageClassName"] = storage_class;
  return claim;
}

json storage_class(const std::string& name) {
  return {{"metadata", {{"name", name}}}, {"provisioner", "example.com/never"}};
}

json warning(const std::string& uid, const std::string& reason, const std::string& message,
             const std::string& time) {
  return {{"type", "Warning"},
          {"involvedObject", {{"uid", uid}}},
          {"reason", reason},
          {"message", message},
          {"lastTimestamp", time}};
}

const json kUnschedulable = json::parse(R"({"phase": "Pending", "conditions": [
  {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
   "message": "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims."}]})");

TEST_CASE("diagnosis: the scheduler's reason and the unbound claim with its StorageClass") {
  WorkloadState state = pending();
  state.pods = {pod("source-controller-1", kUnschedulable)};
  state.claims = {claim("Pending", "never")};
  state.storage_classes = {storage_class("never")};
  Diagnosis diagnosis = diagnose(state);
  CHECK_FALSE(diagnosis.permanent);
  CHECK(diagnosis.cause ==
        "pod source-controller-1: Unschedulable: 0/1 nodes are available: pod has unbound "
        "immediate PersistentVolumeClaims.; PersistentVolumeClaim flux-system/data is Pending "
        "(StorageClass \"never\", provisioner \"example.com/never\")");

  // The claim's latest warning says more.
  state.events = {warning("uid-data", "ProvisioningFailed", "first", "2026-01-01T00:00:01Z"),
                  warning("uid-data", "ProvisioningFailed", "latest", "2026-01-01T00:00:09Z"),
                  warning("uid-other", "ProvisioningFailed", "another's", "2026-01-01T00:00:10Z")};
  CHECK(
      diagnose(state).cause.ends_with("provisioner \"example.com/never\"): "
                                      "ProvisioningFailed: latest"));
  // Bound, the claim is not a cause.
  state.claims = {claim("Bound", "never")};
  CHECK(diagnose(state).cause.find("PersistentVolumeClaim flux-system") == std::string::npos);
}

TEST_CASE("diagnosis: a claim naming a StorageClass that does not exist never binds") {
  WorkloadState state = pending();
  state.pods = {pod("source-controller-1", kUnschedulable)};
  state.claims = {claim("Pending", "nowhere")};
  Diagnosis diagnosis = diagnose(state);
  CHECK(diagnosis.permanent);
  CHECK(diagnosis.cause ==
        "PersistentVolumeClaim flux-system/data: StorageClass \"nowhere\" does not exist");

  // No class named (the default's), a volume bound by hand, or bound: not so.
  CHECK_FALSE(names_missing_storage_class(claim("Pending", ""), {}));
  json by_hand = claim("Pending", "nowhere");
  by_hand["spec"]["volumeName"] = "pv-1";
  CHECK_FALSE(names_missing_storage_class(by_hand, {}));
  CHECK_FALSE(names_missing_storage_class(claim("Bound", "nowhere"), {}));
  CHECK_FALSE(names_missing_storage_class(claim("Pending", "never"), {storage_class("never")}));
}

TEST_CASE("diagnosis: a namespace being deleted never lets the Deployment become ready") {
  WorkloadState state = pending();
  state.ns =
      json::parse(R"({"metadata": {"name": "flux-system"}, "status": {"phase": "Terminating"}})");
  Diagnosis diagnosis = diagnose(state);
  CHECK(diagnosis.permanent);
  CHECK(diagnosis.cause == "namespace flux-system is being deleted");
  CHECK(is_terminating(
      json::parse(R"({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}})")));
  CHECK_FALSE(is_terminating(json::parse(R"({"status": {"phase": "Active"}})")));
  state.ns.reset();  // not read: nothing said
  CHECK_FALSE(diagnose(state).permanent);
}

TEST_CASE("diagnosis: image pull errors and crash loops, in the kubelet's words") {
  WorkloadState state = pending();
  state.deployment["spec"] = json::object();
  state.pods = {pod("ready", json::parse(R"({"conditions": [{"type": "Ready", "status": "True"}],
                  "containerStatuses": [{"name": "manager",
                    "state": {"waiting": {"reason": "ImagePullBackOff"}}}]})")),
                pod("pulling", json::parse(R"({"containerStatuses": [{"name": "manager",
                  "state": {"waiting": {"reason": "ErrImagePull",
                    "message": "rpc error: not found"}}}]})"))};
  // A ready pod is not a cause, whatever it says.
  CHECK(diagnose(state).cause ==
        "pod pulling: container manager: ErrImagePull: rpc error: not found");

  state.pods = {pod("crashing", json::parse(R"({"initContainerStatuses": [{"name": "init",
    "state": {"terminated": {"reason": "Completed"}}}], "containerStatuses": [{"name": "manager",
    "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s"}},
    "lastState": {"terminated": {"reason": "Error", "exitCode": 2}}}]})"))};
  CHECK(diagnose(state).cause ==
        "pod crashing: container manager: CrashLoopBackOff: back-off 40s (last terminated: "
        "Error, exit code 2)");

  // Starting, it says nothing; a warning event about the pod then speaks.
  state.pods = {pod("starting", json::parse(R"({"containerStatuses": [{"name": "manager",
    "state": {"waiting": {"reason": "ContainerCreating"}}}]})"))};
  CHECK(diagnose(state).cause.empty());
  state.events = {warning("uid-starting", "FailedMount", "secret \"x\" not found", "")};
  CHECK(diagnose(state).cause == "pod starting: FailedMount: secret \"x\" not found");
}

TEST_CASE("diagnosis: no pod, the ReplicaSet says why (a quota)") {
  WorkloadState state = pending();
  state.deployment["spec"] = json::object();
  state.replica_sets = {{{"metadata", {{"name", "source-controller-5d"}, {"uid", "uid-rs"}}}}};
  state.events = {warning("uid-rs", "FailedCreate",
                          "pods \"source-controller-5d-x\" is forbidden: exceeded quota: pods",
                          "2026-01-01T00:00:01Z")};
  CHECK(diagnose(state).cause ==
        "ReplicaSet source-controller-5d: FailedCreate: pods \"source-controller-5d-x\" is "
        "forbidden: exceeded quota: pods");
  state.replica_sets[0]["status"] = json::parse(R"({"conditions": [{"type": "ReplicaFailure",
    "status": "True", "reason": "FailedCreate", "message": "exceeded quota"}]})");
  CHECK(diagnose(state).cause == "ReplicaSet source-controller-5d: FailedCreate: exceeded quota");
}

TEST_CASE("diagnosis: the events read are those of pods not ready, claims not bound") {
  WorkloadState state = pending();
  json ready =
      pod("ready", json::parse(R"({"conditions": [{"type": "Ready", "status": "True"}]})"));
  state.pods = {ready, pod("a", kUnschedulable), pod("b", kUnschedulable),
                pod("c", kUnschedulable)};
  state.replica_sets = {{{"metadata", {{"uid", "uid-rs"}}}}};
  state.claims = {claim("Bound", "never"), claim("Pending", "never")};
  state.claims[0]["metadata"]["uid"] = "uid-bound";
  FurtherReads reads = further_reads(state, 2);
  CHECK(reads.event_subjects == std::vector<std::string>{"uid-a", "uid-b", "uid-data"});
  CHECK(reads.storage_classes == std::vector<std::string>{"never"});
  // No pod: the ReplicaSets' events.
  state.pods.clear();
  CHECK(further_reads(state, 2).event_subjects == std::vector<std::string>{"uid-rs", "uid-data"});
}

TEST_CASE("diagnosis: what the server sends of the wrong type is left out, never thrown") {
  WorkloadState state = pending();
  state.deployment = json::parse(R"({"metadata": 7, "spec": {"template": {"spec": {"volumes": [
    3, {"persistentVolumeClaim": {"claimName": 5}}]}}}})");
  state.pods = {json::array(), json::parse(R"({"metadata": {"name": 1}, "status": {"conditions": 2,
    "containerStatuses": [null, {"state": {"waiting": {"reason": 9}}}]}})")};
  state.claims = {json::parse(R"({"spec": {"storageClassName": ["x"]}, "status": "Pending"})")};
  state.events = {json("event"), json::parse(R"({"involvedObject": []})")};
  state.ns = json::parse(R"({"metadata": [], "status": {"phase": 3}})");
  CHECK(claim_names(state.deployment).empty());
  CHECK_NOTHROW(diagnose(state));
  CHECK_FALSE(diagnose(state).permanent);
}

}  // namespace
}  // namespace fluxop::ssa
