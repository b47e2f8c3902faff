#include "core/reconcile/lease_lock.h"

#include <thread>

#include "core/error.h"
#include "core/kube/lease.h"

namespace fluxop::reconcile {

using nlohmann::json;

LeaseLock::LeaseLock(kube::Cluster& cluster, std::string ns, std::string name,
                     std::function<void(const std::string&)> progress)
    : cluster_(cluster),
      ref_(kube::lease_key(ns, name)),
      progress_(std::move(progress)),
      identity_(kube::process_identity()) {}

LeaseLock::~LeaseLock() {
  try {
    release();
  } catch (const std::exception& e) {
    if (progress_) {
      progress_("warning: " + display_name(ref_) + ": not released (" + e.what() +
                "); it expires in " + std::to_string(kDuration.count()) + "s");
    }
  }
}

bool LeaseLock::write_ours(bool holding) {
  std::string now = kube::micro_time(std::chrono::system_clock::now());
  kube::LeaseRecord record{holding ? identity_ : "", kDuration, now, now, std::nullopt};
  std::optional<json> written = kube::write_lease(cluster_, ref_, written_, record);
  if (!written) return false;
  written_ = std::move(written);
  return true;
}

bool LeaseLock::expired(const kube::LeaseRecord& lease) {
  if (kube::parse_micro_time(lease.renew_time) + lease.duration < std::chrono::system_clock::now())
    return true;
  auto now = std::chrono::steady_clock::now();
  if (lease != seen_) {
    seen_ = lease;
    seen_at_ = now;
  }
  return now - seen_at_ > lease.duration;
}

bool LeaseLock::try_take(const std::optional<json>& live) {
  written_.reset();
  if (live) {
    kube::LeaseRecord lease = kube::lease_record(*live);
    bool free = lease.holder.empty() || lease.holder == identity_ || expired(lease) ||
                kube::holder_died_here(lease.holder);
    if (!free) return false;
    written_ = live;
  }
  return write_ours(true);
}

std::string holder_text(const json& lease) {
  kube::LeaseRecord record = kube::lease_record(lease);
  return "held by " + record.holder + " since " + record.acquire_time + ", last renewed " +
         record.renew_time + " for " + std::to_string(record.duration.count()) + "s";
}

bool LeaseLock::acquire(std::chrono::seconds timeout, std::optional<json> lease) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool told = false;
  bool at_once = true;
  while (!try_take(lease)) {
    at_once = false;
    std::string holder = lease ? kube::lease_record(*lease).holder : "";
    if (std::chrono::steady_clock::now() >= deadline) {
      throw Error(display_name(ref_) + ": " + (lease ? holder_text(*lease) : "held") +
                  ": another apply of this instance is running (waited " +
                  std::to_string(timeout.count()) + "s, see --lock-timeout)");
    }
    if (!told) {
      if (progress_) progress_("waiting for " + display_name(ref_) + ", held by " + holder);
      told = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    lease = cluster_.get(ref_);
  }
  held_ = true;
  renewed_ = std::chrono::steady_clock::now();
  return at_once;
}

void LeaseLock::renew() {
  if (!held_ || std::chrono::steady_clock::now() - renewed_ < kDuration / 3) return;
  if (!write_ours(true)) {
    held_ = false;
    // Who took it, said once: the loser writes nothing more, so the error
    // and its Event are all that tell.
    std::optional<json> live = cluster_.get(ref_);
    lost_ = display_name(ref_) + ": lost to another apply (" +
            (live ? holder_text(*live) : std::string("deleted")) + ")";
    throw Error(lost_);
  }
  renewed_ = std::chrono::steady_clock::now();
}

void LeaseLock::confirm(std::chrono::milliseconds older_than) {
  if (!held_) throw Error(lost_.empty() ? display_name(ref_) + ": not held" : lost_);
  if (std::chrono::steady_clock::now() - renewed_ > older_than) renewed_ = {};
  renew();
}

void LeaseLock::release() {
  if (!held_) return;
  held_ = false;
  write_ours(false);  // a lease that moved is someone else's now
}

void LeaseLock::remove() {
  if (!held_) return;
  held_ = false;
  cluster_.remove(ref_);
}

}  // namespace fluxop::reconcile
