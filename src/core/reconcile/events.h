// Kubernetes Events (core/v1) about the FluxInstance, written as the Flux
// Operator's recorder writes them (client-go's record package behind
// controller-runtime, source "flux-operator"), so that `kubectl events` and
// `kubectl describe fluxinstance` show the daemon's events as the operator's:
// the same names, fields and annotations, a repeated event counted on the
// Event first written, and ten similar ones within ten minutes combined.
// The daemon and the one-shot apply record the same events, so that
// `kubectl describe fluxinstance` tells the same story whichever ran last.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "core/kube/cluster.h"
#include "core/reconcile/failure.h"

namespace fluxop::reconcile {

// The FluxInstance an event is about (its involvedObject).
struct InvolvedObject {
  std::string name;
  std::string ns;
  std::string uid;
  std::string resource_version;
};

// Used from one thread (the daemon's loop, the apply).
class EventRecorder {
 public:
  using Clock = std::function<std::chrono::system_clock::time_point()>;
  using ErrorHandler = std::function<void(const std::string&)>;

  // Events never fail what they are about: errors writing them go to
  // `on_error` and the event is dropped.
  EventRecorder(kube::Cluster& cluster, ErrorHandler on_error,
                Clock clock = std::chrono::system_clock::now);

  void record(const InvolvedObject& object, const InstanceEvent& event);
  // On the instance `ref`, its uid read from the cluster when `uid` is empty
  // (an error reading it goes to `on_error`; the event is still written).
  void record(const kube::ObjectKey& ref, std::string uid, const InstanceEvent& event);

 private:
  // An Event written, as client-go's correlator remembers it.
  struct Written {
    std::string name;
    std::string ns;
    int count = 0;
    std::string first_timestamp;
    std::uint64_t last_use = 0;  // for evicting the least recently used
  };
  // The distinct messages of the events of one object, type and reason.
  struct Similar {
    std::set<std::string> messages;
    std::chrono::system_clock::time_point last;
  };

  // Writes `event` as new, or as the next occurrence of the one remembered
  // under `key`; remembers what the server made of it.
  void write(const std::string& key, nlohmann::json event);
  void remember(const std::string& key, const nlohmann::json& written);

  kube::Cluster& cluster_;
  ErrorHandler on_error_;
  Clock clock_;
  std::map<std::string, Written> written_;
  std::map<std::string, Similar> similar_;
  std::uint64_t uses_ = 0;
};

}  // namespace fluxop::reconcile
