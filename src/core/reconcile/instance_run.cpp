#include "core/reconcile/instance_run.h"

#include "core/error.h"

namespace fluxop::reconcile {

InstanceRun::InstanceRun(kube::Cluster& cluster, kube::ObjectKey instance,
                         std::function<std::string()> interruption,
                         std::function<void(const std::string&)> on_progress,
                         std::function<void(const ssa::Change&)> on_change, WaitStatus* wait_status)
    : cluster_(cluster),
      instance_(std::move(instance)),
      interruption_(std::move(interruption)),
      on_progress_(std::move(on_progress)),
      on_change_(std::move(on_change)),
      wait_status_(wait_status) {}

void InstanceRun::before_request() {
  if (std::string stopped = interruption(); !stopped.empty()) throw Error(stopped);
  if (lock_) lock_->renew();
}

std::string InstanceRun::interruption() const { return interruption_ ? interruption_() : ""; }

void InstanceRun::progress(const std::string& line) const {
  if (on_progress_) on_progress_(line);
}

void InstanceRun::report(const ssa::Change& change) {
  changes_.push_back(change);
  if (on_change_) on_change_(change);
}

ssa::EngineHooks InstanceRun::engine_hooks() {
  return {.before_request = [this] { before_request(); },
          .on_progress = [this](const std::string& line) { progress(line); },
          .wait_status = wait_status_};
}

void InstanceRun::confirm_lock(std::chrono::milliseconds older_than) {
  if (lock_) lock_->confirm(older_than);
}

bool InstanceRun::lock(std::chrono::seconds timeout, std::optional<nlohmann::json> lease) {
  if (cluster_.dry_run()) return false;
  lock_.emplace(cluster_, instance_.ns, LeaseLock::name_for(instance_.name),
                [this](const std::string& line) { progress(line); });
  return lock_->acquire(timeout, std::move(lease));
}

}  // namespace fluxop::reconcile
