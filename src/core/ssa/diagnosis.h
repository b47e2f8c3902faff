// Why a Deployment is not ready yet, in the words of those who know: the
// scheduler (a pod's PodScheduled condition), the kubelet (a container's
// waiting state), the controllers (their events on the pods, ReplicaSets and
// claims), and what the claims ask for (a StorageClass that is not there).
// A pure function of the objects read, so that the engine's wait can say
// what is pending and why, and stop at once where waiting cannot help.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace fluxop::ssa {

// What the cluster holds of one Deployment still pending.
struct WorkloadState {
  nlohmann::json deployment;
  std::vector<nlohmann::json> replica_sets;     // selected by the Deployment's selector
  std::vector<nlohmann::json> pods;             // likewise
  std::vector<nlohmann::json> claims;           // the PersistentVolumeClaims its pods mount
  std::vector<nlohmann::json> storage_classes;  // those the claims name, where they exist
  std::vector<nlohmann::json> events;           // of the pods, ReplicaSets and claims
  std::optional<nlohmann::json> ns;             // its namespace, when read
};

struct Diagnosis {
  std::string cause;  // empty when nothing is said beyond the Deployment's status
  // Certain never to resolve by itself: the wait fails now.
  bool permanent = false;
};

Diagnosis diagnose(const WorkloadState& state);

// What a diagnosis reads once the Deployment's pods, ReplicaSets and claims
// are in `state`: the uids of the objects whose events may say more (pods
// not ready, at most `max_pods`; the ReplicaSets when there is no pod; the
// claims not bound), and the StorageClasses those claims name.
struct FurtherReads {
  std::vector<std::string> event_subjects;
  std::vector<std::string> storage_classes;
};
FurtherReads further_reads(const WorkloadState& state, std::size_t max_pods);

// The names of the PersistentVolumeClaims the Deployment's pods mount.
std::vector<std::string> claim_names(const nlohmann::json& deployment);

// The causes certain never to resolve by themselves. An object being
// deleted (a deletionTimestamp; a namespace's phase Terminating) is going,
// and a namespace takes what is in it along; a claim naming a StorageClass
// that does not exist is never provisioned (a class is not created by
// waiting).
bool is_terminating(const nlohmann::json& object);
bool names_missing_storage_class(const nlohmann::json& claim,
                                 const std::vector<nlohmann::json>& storage_classes);

}  // namespace fluxop::ssa
