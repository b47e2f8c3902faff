#include "core/ssa/diagnosis.h"

#include <algorithm>

#include "core/kube/meta.h"
#include "core/reason.h"

namespace fluxop::ssa {

using kube::array_at;
using kube::at;
using kube::text_at;
using nlohmann::json;

namespace {

std::string joined(const std::string& reason, const std::string& message) {
  if (reason.empty()) return message;
  return message.empty() ? reason : reason + ": " + message;
}

// The latest Warning event about the object (by its uid): "Reason: message".
// Normal events tell of progress, not of what holds it.
std::string latest_warning(const std::vector<json>& events, const json& object) {
  std::string uid = text_at(object, "/metadata/uid");
  if (uid.empty()) return "";
  const json* latest = nullptr;
  std::string latest_time;
  for (const json& event : events) {
    if (text_at(event, "/involvedObject/uid") != uid) continue;
    if (text_at(event, "/type") != name(EventType::warning)) continue;
    // RFC 3339 times in UTC compare as text.
    std::string time = text_at(event, "/lastTimestamp");
    if (time.empty()) time = text_at(event, "/eventTime");
    if (time.empty()) time = text_at(event, "/metadata/creationTimestamp");
    if (!latest || time >= latest_time) {
      latest = &event;
      latest_time = time;
    }
  }
  return latest ? joined(text_at(*latest, "/reason"), text_at(*latest, "/message")) : "";
}

// Waiting reasons that are only a step of starting a container.
bool is_starting(const std::string& reason) {
  return reason.empty() || reason == "ContainerCreating" || reason == "PodInitializing";
}

// Why a container does not run: its waiting reason (ErrImagePull,
// ImagePullBackOff, CrashLoopBackOff and how it last ended, ...).
std::string container_cause(const json& pod) {
  for (const char* statuses : {"/status/initContainerStatuses", "/status/containerStatuses"}) {
    for (const json& container : array_at(pod, statuses)) {
      std::string reason = text_at(container, "/state/waiting/reason");
      if (is_starting(reason)) continue;
      std::string cause = "container " + text_at(container, "/name") + ": " +
                          joined(reason, text_at(container, "/state/waiting/message"));
      if (const json* terminated = at(container, "/lastState/terminated")) {
        std::string last = text_at(*terminated, "/reason");
        const json* code = at(*terminated, "/exitCode");
        if (code && code->is_number_integer()) {
          last += (last.empty() ? "" : ", ") + std::string("exit code ") +
                  std::to_string(code->get<std::int64_t>());
        }
        if (!last.empty()) cause += " (last terminated: " + last + ")";
      }
      return cause;
    }
  }
  return "";
}

std::string pod_cause(const json& pod, const std::vector<json>& events) {
  std::string cause = container_cause(pod);
  if (cause.empty()) {
    if (const json* scheduled = kube::condition_at(pod, "PodScheduled");
        scheduled && text_at(*scheduled, "/status") == "False")
      cause = joined(text_at(*scheduled, "/reason"), text_at(*scheduled, "/message"));
  }
  if (cause.empty()) cause = latest_warning(events, pod);
  return cause.empty() ? "" : "pod " + text_at(pod, "/metadata/name") + ": " + cause;
}

bool is_pod_ready(const json& pod) {
  const json* ready = kube::condition_at(pod, "Ready");
  return ready && text_at(*ready, "/status") == "True";
}

const json* storage_class(const json& claim, const std::vector<json>& storage_classes) {
  std::string name = text_at(claim, "/spec/storageClassName");
  for (const json& found : storage_classes) {
    if (text_at(found, "/metadata/name") == name) return &found;
  }
  return nullptr;
}

std::string claim_cause(const json& claim, const WorkloadState& state) {
  std::string what = "PersistentVolumeClaim " + text_at(claim, "/metadata/namespace") + "/" +
                     text_at(claim, "/metadata/name");
  std::string class_name = text_at(claim, "/spec/storageClassName");
  if (names_missing_storage_class(claim, state.storage_classes))
    return what + ": StorageClass \"" + class_name + "\" does not exist";
  std::string phase = text_at(claim, "/status/phase");
  std::string cause = what + (phase.empty() ? " not bound" : " is " + phase);
  if (const json* found = storage_class(claim, state.storage_classes)) {
    cause += " (StorageClass \"" + class_name + "\", provisioner \"" +
             text_at(*found, "/provisioner") + "\")";
  }
  std::string event = latest_warning(state.events, claim);
  return event.empty() ? cause : cause + ": " + event;
}

}  // namespace

FurtherReads further_reads(const WorkloadState& state, std::size_t max_pods) {
  FurtherReads reads;
  auto events_of = [&reads](const json& object) {
    std::string uid = text_at(object, "/metadata/uid");
    if (!uid.empty()) reads.event_subjects.push_back(uid);
  };
  std::size_t pods = 0;
  for (const json& pod : state.pods) {
    if (!is_pod_ready(pod) && pods++ < max_pods) events_of(pod);
  }
  if (state.pods.empty()) {
    for (const json& replica_set : state.replica_sets) events_of(replica_set);
  }
  for (const json& claim : state.claims) {
    if (text_at(claim, "/status/phase") == "Bound") continue;
    events_of(claim);
    std::string class_name = text_at(claim, "/spec/storageClassName");
    if (!class_name.empty()) reads.storage_classes.push_back(class_name);
  }
  return reads;
}

std::vector<std::string> claim_names(const json& deployment) {
  std::vector<std::string> names;
  for (const json& volume : array_at(deployment, "/spec/template/spec/volumes")) {
    std::string name = text_at(volume, "/persistentVolumeClaim/claimName");
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

bool is_terminating(const json& object) {
  return at(object, "/metadata/deletionTimestamp") ||
         text_at(object, "/status/phase") == "Terminating";
}

bool names_missing_storage_class(const json& claim, const std::vector<json>& storage_classes) {
  // No class named: the cluster's default, or a volume bound by hand.
  if (text_at(claim, "/spec/storageClassName").empty() ||
      !text_at(claim, "/spec/volumeName").empty())
    return false;
  return text_at(claim, "/status/phase") != "Bound" && !storage_class(claim, storage_classes);
}

Diagnosis diagnose(const WorkloadState& state) {
  std::string ns = text_at(state.deployment, "/metadata/namespace");
  if (state.ns && is_terminating(*state.ns)) return {"namespace " + ns + " is being deleted", true};
  Diagnosis diagnosis;
  auto add = [&diagnosis](const std::string& cause) {
    if (cause.empty()) return;
    diagnosis.cause += (diagnosis.cause.empty() ? "" : "; ") + cause;
  };
  // A claim that can never bind first: it is the end of the story.
  for (const json& claim : state.claims) {
    if (names_missing_storage_class(claim, state.storage_classes)) {
      diagnosis.permanent = true;
      add(claim_cause(claim, state));
    }
  }
  if (diagnosis.permanent) return diagnosis;
  // The first pod not ready with something to say: they tend to say the same.
  for (const json& pod : state.pods) {
    if (is_pod_ready(pod) || at(pod, "/metadata/deletionTimestamp")) continue;
    std::string cause = pod_cause(pod, state.events);
    if (cause.empty()) continue;
    add(cause);
    break;
  }
  for (const json& claim : state.claims) {
    if (text_at(claim, "/status/phase") != "Bound") add(claim_cause(claim, state));
  }
  // No pod to speak of: the ReplicaSet says why it made none (a quota, an
  // admission refusal).
  if (state.pods.empty()) {
    for (const json& replica_set : state.replica_sets) {
      std::string cause;
      if (const json* failure = kube::condition_at(replica_set, "ReplicaFailure");
          failure && text_at(*failure, "/status") == "True")
        cause = joined(text_at(*failure, "/reason"), text_at(*failure, "/message"));
      if (cause.empty()) cause = latest_warning(state.events, replica_set);
      if (!cause.empty())
        add("ReplicaSet " + text_at(replica_set, "/metadata/name") + ": " + cause);
    }
  }
  return diagnosis;
}

}  // namespace fluxop::ssa
