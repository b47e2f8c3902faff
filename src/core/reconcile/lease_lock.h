// One apply at a time per FluxInstance: a coordination.k8s.io Lease in the
// instance's namespace, taken with optimistic concurrency (create, or replace
// at a resourceVersion) and renewed while the apply runs. A holder that
// stopped renewing (killed) loses it when the lease expires: by its
// renewTime, or once its record stayed the same for its duration as this
// process saw it (a renewTime in the future, another host's clock); a holder
// on this host whose process is gone loses it at once. A holder that was
// paused past its lease finds out at its next renewal, which is a
// compare-and-swap on the lease as it last wrote it: it then writes nothing
// more.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "core/kube/cluster.h"
#include "core/kube/lease.h"
#include "core/reconcile/inventory.h"

namespace fluxop::reconcile {

class LeaseLock {
 public:
  static constexpr std::chrono::seconds kDuration{30};
  // The lease of the instance so named.
  static std::string name_for(const std::string& instance) { return "fluxopctl-" + instance; }

  // `progress` hears of a wait for another holder and of a lease left
  // unreleased.
  LeaseLock(kube::Cluster& cluster, std::string ns, std::string name,
            std::function<void(const std::string&)> progress);
  ~LeaseLock();  // releases it if held
  LeaseLock(const LeaseLock&) = delete;
  LeaseLock& operator=(const LeaseLock&) = delete;

  // Waits up to `timeout` for the lease, `lease` being what was just read
  // of it (nullopt: none); throws fluxop::Error naming its holder when it
  // stays taken. True when taken at once, over `lease` as it was read: no
  // other apply held it since.
  bool acquire(std::chrono::seconds timeout, std::optional<nlohmann::json> lease);
  // Renews when a third of the duration has passed since the last renewal.
  void renew();
  // Before a write that must be this holder's alone (the instance's status):
  // renews (a compare-and-swap) when the lease was last written longer than
  // `older_than` ago (zero: now), and throws fluxop::Error naming the holder
  // when the lease is no longer held (another took it, or it was lost
  // before).
  void confirm(std::chrono::milliseconds older_than);
  void release();
  // Deletes the lease when it is held (an uninstall leaves none behind).
  void remove();
  // False once renew() found the lease taken by another apply.
  bool held() const { return held_; }

 private:
  bool try_take(const std::optional<nlohmann::json>& live);
  // Whether another holder's lease `live` has expired: by its renewTime,
  // or unchanged for its duration since this lock first saw it so.
  bool expired(const kube::LeaseRecord& lease);
  // The lease written as ours over `written_`, held or released; false
  // when it moved.
  bool write_ours(bool holding);

  kube::Cluster& cluster_;
  kube::ObjectKey ref_;
  std::function<void(const std::string&)> progress_;
  std::string identity_;
  bool held_ = false;
  // The lease as last written (or read, before taking it): a write at
  // another resourceVersion means someone else took it.
  std::optional<nlohmann::json> written_;
  std::chrono::steady_clock::time_point renewed_;
  std::string lost_;  // to whom it was lost, once it was
  // Another holder's record as first seen, and when.
  std::optional<kube::LeaseRecord> seen_;
  std::chrono::steady_clock::time_point seen_at_;
};

// "held by HOLDER since ACQUIRED, last renewed RENEWED for DURATION", of
// a Lease object.
std::string holder_text(const nlohmann::json& lease);

}  // namespace fluxop::reconcile
