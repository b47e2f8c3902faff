// One apply at a time per FluxInstance: a coordination.k8s.io Lease in the
// instance's namespace, taken with optimistic concurrency (create, or replace
// at a resourceVersion) and renewed while the apply runs. A holder that
// stopped renewing (killed) loses it when the lease expires; a holder on this
// host whose process is gone loses it at once.
#pragma once

#include <chrono>
#include <string>

#include "core/reconcile/inventory.h"
#include "core/ssa/cluster_api.h"

namespace fluxop::reconcile {

class LeaseLock {
 public:
  static constexpr std::chrono::seconds kDuration{30};

  LeaseLock(ssa::ClusterApi& cluster, std::string ns, std::string name);
  ~LeaseLock();  // releases it if held
  LeaseLock(const LeaseLock&) = delete;
  LeaseLock& operator=(const LeaseLock&) = delete;

  // Waits up to `timeout` for the lease; throws fluxop::Error naming its
  // holder when it stays taken.
  void acquire(std::chrono::seconds timeout);
  // Renews when a third of the duration has passed since the last renewal.
  void renew();
  void release();
  // False once renew() found the lease taken by another apply.
  bool held() const { return held_; }

 private:
  bool try_take();
  nlohmann::json lease_object(const std::string& resource_version) const;

  ssa::ClusterApi& cluster_;
  ObjectRef ref_;
  std::string identity_;
  bool held_ = false;
  std::chrono::steady_clock::time_point renewed_;
};

}  // namespace fluxop::reconcile
