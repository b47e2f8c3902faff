// What every run of a policy on one FluxInstance (an apply, an uninstall)
// does between its steps: it stops at its next request once interrupted,
// holds the instance's lock (renewed as it goes), and reports its progress
// and its changes as they happen.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/kube/cluster.h"
#include "core/reconcile/inventory.h"
#include "core/reconcile/lease_lock.h"
#include "core/ssa/change_set.h"
#include "core/ssa/engine.h"

namespace fluxop::reconcile {

class InstanceRun {
 public:
  InstanceRun(kube::Cluster& cluster, kube::ObjectKey instance,
              std::function<std::string()> interruption,
              std::function<void(const std::string&)> on_progress,
              std::function<void(const ssa::Change&)> on_change, WaitStatus* wait_status);
  InstanceRun(const InstanceRun&) = delete;
  InstanceRun& operator=(const InstanceRun&) = delete;

  // Before each request: throws fluxop::Error once interrupted; renews the
  // lock when it is held.
  void before_request();
  // What interrupted the run ("interrupted by SIGINT"), else empty.
  std::string interruption() const;
  void progress(const std::string& line) const;
  // Reports the change, and keeps it.
  void report(const ssa::Change& change);
  const std::vector<ssa::Change>& changes() const { return changes_; }
  // The hooks of an engine working for this run.
  ssa::EngineHooks engine_hooks();

  // Takes the instance's lock (none on a dry-run cluster), `lease` being
  // what was just read of it. True when it was taken at once over `lease`
  // (LeaseLock::acquire); false on a dry-run cluster.
  bool lock(std::chrono::seconds timeout, std::optional<nlohmann::json> lease);
  // The lock, once taken.
  LeaseLock* held_lock() { return lock_ ? &*lock_ : nullptr; }
  // Before a write after a wait: throws fluxop::Error unless the lock is
  // still held (LeaseLock::confirm, renewed when last written longer than
  // `older_than` ago); nothing without a lock (a dry run).
  void confirm_lock(std::chrono::milliseconds older_than);

 private:
  kube::Cluster& cluster_;
  kube::ObjectKey instance_;
  std::function<std::string()> interruption_;
  std::function<void(const std::string&)> on_progress_;
  std::function<void(const ssa::Change&)> on_change_;
  WaitStatus* wait_status_;
  std::vector<ssa::Change> changes_;
  std::optional<LeaseLock> lock_;
};

}  // namespace fluxop::reconcile
