// Leader election among the daemon's replicas, as controller-runtime elects
// the Flux Operator's: a coordination.k8s.io Lease taken when absent,
// released or unrenewed for a lease duration (as this replica observed it:
// no clock is compared across hosts), renewed every retry period, and given
// up when it could not be renewed within the renew deadline. It runs on a
// thread of its own, so a long reconcile never delays a renewal. The Lease is
// released (holder emptied) when the election ends while leading, so that a
// standby takes over at once.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "core/kube/cluster.h"
#include "core/kube/lease.h"

namespace fluxop::daemon {

struct LeaderOptions {
  std::string ns;
  // The operator's own Lease: the daemon and an operator never both lead.
  std::string name = "flux-operator";
  std::string identity;  // unique per replica; hostname_<random> when empty
  // controller-runtime's defaults, as the operator's flags set them.
  std::chrono::milliseconds lease_duration{35'000};
  std::chrono::milliseconds renew_deadline{30'000};
  std::chrono::milliseconds retry_period{5'000};
};

class LeaderElection {
 public:
  // `on_change` is called from the election's thread when this replica
  // starts leading and when it stops leading (lost, not released);
  // `on_error` with one line when a request failed (it is retried).
  // The election talks to `cluster` through a connection of its own.
  LeaderElection(kube::Cluster& cluster, LeaderOptions options, std::function<void()> on_change,
                 std::function<void(const std::string&)> on_error);
  ~LeaderElection();  // releases the Lease when leading
  LeaderElection(const LeaderElection&) = delete;
  LeaderElection& operator=(const LeaderElection&) = delete;

  bool leading() const { return leading_; }
  // Leadership was held and then lost: the replica must stop acting.
  bool lost() const { return lost_; }
  const std::string& identity() const { return options_.identity; }

 private:
  void run();
  // One attempt to take or renew the Lease; whether this replica holds it.
  bool try_acquire_or_renew();
  void release();
  // What this replica writes over `current`: itself as the holder, or
  // (not `ours`) the Lease released.
  kube::LeaseRecord next_record(const kube::LeaseRecord& current, bool ours) const;
  // Waits `delay` unless stopped first; false when stopped.
  bool pause(std::chrono::milliseconds delay);

  std::unique_ptr<kube::Cluster> cluster_;  // used by the election's thread only
  LeaderOptions options_;
  kube::ObjectKey key_;
  std::function<void()> on_change_;
  std::function<void(const std::string&)> on_error_;
  // The Lease's record as last seen, and when it was first seen so: a
  // holder whose record stays the same for a lease duration has stopped
  // renewing.
  std::optional<kube::LeaseRecord> observed_;
  std::chrono::steady_clock::time_point observed_at_;
  std::atomic<bool> leading_{false};
  std::atomic<bool> lost_{false};
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable stopped_;
  std::thread thread_;
};

}  // namespace fluxop::daemon
