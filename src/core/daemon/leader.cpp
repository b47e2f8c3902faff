#include "core/daemon/leader.h"

#include "core/error.h"

namespace fluxop::daemon {

using Clock = std::chrono::steady_clock;

LeaderElection::LeaderElection(kube::Cluster& cluster, LeaderOptions options,
                               std::function<void()> on_change,
                               std::function<void(const std::string&)> on_error)
    // One attempt per request, within two retry periods: the loop retries.
    : cluster_(cluster.for_thread(options.retry_period * 2)),
      options_(std::move(options)),
      key_(kube::lease_key(options_.ns, options_.name)),
      on_change_(std::move(on_change)),
      on_error_(std::move(on_error)) {
  if (options_.identity.empty()) options_.identity = kube::replica_identity();
  thread_ = std::thread([this] { run(); });
}

LeaderElection::~LeaderElection() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stopped_.notify_all();
  thread_.join();
}

bool LeaderElection::pause(std::chrono::milliseconds delay) {
  std::unique_lock lock(mutex_);
  return !stopped_.wait_for(lock, delay, [this] { return stopping_.load(); });
}

kube::LeaseRecord LeaderElection::next_record(const kube::LeaseRecord& current, bool ours) const {
  std::string now = kube::micro_time(std::chrono::system_clock::now());
  bool held_before = current.holder == options_.identity;
  bool same_holder = held_before || !ours;
  std::int64_t transitions = current.transitions.value_or(0);
  return {.holder = ours ? options_.identity : "",
          .duration = ours ? std::chrono::ceil<std::chrono::seconds>(options_.lease_duration)
                           : std::chrono::seconds(1),
          .acquire_time = same_holder && !current.acquire_time.empty() ? current.acquire_time : now,
          .renew_time = now,
          .transitions = same_holder ? transitions : transitions + 1};
}

bool LeaderElection::try_acquire_or_renew() {
  std::optional<nlohmann::json> live = cluster_->get(key_);
  kube::LeaseRecord current = live ? kube::lease_record(*live) : kube::LeaseRecord{};
  if (live && current != observed_) {
    observed_ = current;
    observed_at_ = Clock::now();
  }
  if (live && !current.holder.empty() && current.holder != options_.identity &&
      Clock::now() < observed_at_ + current.duration)
    return false;
  kube::LeaseRecord next = next_record(current, true);
  if (!live) next.transitions = 0;
  if (!kube::write_lease(*cluster_, key_, live, next)) return false;  // another was first
  observed_ = next;
  observed_at_ = Clock::now();
  return true;
}

void LeaderElection::release() {
  try {
    std::optional<nlohmann::json> live = cluster_->get(key_);
    if (!live) return;
    kube::LeaseRecord current = kube::lease_record(*live);
    if (current.holder != options_.identity) return;
    kube::write_lease(*cluster_, key_, live, next_record(current, false));
  } catch (const Error& e) {
    on_error_(std::string("releasing the leader election Lease: ") + e.what());
  }
}

void LeaderElection::run() {
  auto renewed = Clock::now();
  while (!stopping_) {
    bool held = false;
    try {
      held = try_acquire_or_renew();
    } catch (const Error& e) {
      on_error_(e.what());
    }
    if (held) {
      renewed = Clock::now();
      if (!leading_.exchange(true)) on_change_();
    } else if (leading_ && Clock::now() - renewed >= options_.renew_deadline) {
      // Another replica may lead by now: this one must not act any more.
      leading_ = false;
      lost_ = true;
      on_change_();
      return;
    }
    if (!pause(options_.retry_period)) break;
  }
  if (leading_) release();
}

}  // namespace fluxop::daemon
