#include "core/daemon/schedule.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <random>
#include <utility>

#include "core/duration.h"
#include "core/reconcile/instance_requests.h"

namespace fluxop::daemon {

namespace {

// One interval annotation and the default an absent or bad value leaves.
struct IntervalAnnotation {
  std::string_view name;
  std::chrono::seconds fallback;
  std::string_view fallback_text;  // as a user would write it
};

std::chrono::seconds read_interval(const instance::FluxInstance& flux,
                                   const IntervalAnnotation& annotation,
                                   const std::function<void(const std::string&)>& warn) {
  auto found = flux.annotations.find(std::string(annotation.name));
  if (found == flux.annotations.end()) return annotation.fallback;
  // Negative durations are not in parse_go_duration's grammar: they fall
  // back too.
  std::optional<std::chrono::nanoseconds> duration = parse_go_duration(found->second);
  if (duration) return std::chrono::ceil<std::chrono::seconds>(*duration);
  if (warn) {
    warn("annotation " + std::string(annotation.name) + ": '" + found->second +
         "' is not a duration, using " + std::string(annotation.fallback_text));
  }
  return annotation.fallback;
}

}  // namespace

Intervals read_intervals(const instance::FluxInstance& flux,
                         const std::function<void(const std::string&)>& warn) {
  Intervals defaults;
  return {
      .every = read_interval(flux, {"fluxcd.controlplane.io/reconcileEvery", defaults.every, "1h"},
                             warn),
      .artifact_every = read_interval(
          flux, {"fluxcd.controlplane.io/reconcileArtifactEvery", defaults.artifact_every, "10m"},
          warn),
  };
}

bool reconcile_disabled(const instance::FluxInstance& flux) {
  return reconcile::reconcile_disabled(flux.annotations);
}

Outcome failure_outcome(reconcile::Failure failure) {
  return failure == reconcile::Failure::build ? Outcome::stalled : Outcome::failed;
}

Scheduler::Scheduler(JitterSource jitter) : jitter_(std::move(jitter)) {
  if (!jitter_) {
    jitter_ = [engine = std::mt19937_64(std::random_device{}()),
               uniform = std::uniform_real_distribution<double>(-1, 1)]() mutable {
      return uniform(engine);
    };
  }
}

Observation Scheduler::observe(const std::string& key, const Intervals& intervals, bool disabled,
                               TimePoint now) {
  bool first = !observed_;
  bool was_disabled = disabled_;
  bool key_changed = key != key_;
  observed_ = true;
  key_ = key;
  intervals_ = intervals;
  disabled_ = disabled;
  if (disabled) return first || !was_disabled ? Observation::disabled : Observation::unchanged;
  if (!first && !was_disabled && !key_changed) return Observation::unchanged;
  reconcile_now(now);
  return first ? Observation::first : was_disabled ? Observation::enabled : Observation::changed;
}

void Scheduler::reconciled(Outcome outcome, TimePoint now, bool has_artifact) {
  switch (outcome) {
    case Outcome::succeeded: {
      failures_ = 0;
      reconcile_at_.reset();
      if (intervals_.every.count() > 0) {
        double jitter = std::clamp(jitter_(), -1.0, 1.0);
        std::chrono::duration<double> wait = intervals_.every * (1 + kJitter * jitter);
        reconcile_at_ = now + std::chrono::duration_cast<TimePoint::duration>(wait);
      }
      check_failures_ = 0;
      check_at_.reset();
      if (has_artifact && intervals_.artifact_every.count() > 0) {
        check_at_ = now + intervals_.artifact_every;
      }
      break;
    }
    case Outcome::failed:
      ++failures_;
      reconcile_at_ = now + backoff_for(failures_);
      check_at_.reset();
      break;
    case Outcome::stalled:
      stalled_ = true;
      failures_ = 0;
      reconcile_at_.reset();
      check_at_.reset();
      break;
    case Outcome::interrupted:
      break;
  }
}

void Scheduler::artifact_checked(ArtifactCheck result, TimePoint now) {
  switch (result) {
    case ArtifactCheck::same:
      check_failures_ = 0;
      check_at_.reset();
      if (intervals_.artifact_every.count() > 0) check_at_ = now + intervals_.artifact_every;
      break;
    case ArtifactCheck::changed:
      reconcile_now(now);
      break;
    case ArtifactCheck::failed:
      ++check_failures_;
      check_at_ = now + backoff_for(check_failures_);
      break;
  }
}

Due Scheduler::due(TimePoint now) const {
  if (!observed_ || disabled_) return Due::nothing;
  if (reconcile_at_ && *reconcile_at_ <= now) return Due::reconcile;
  if (check_at_ && *check_at_ <= now) return Due::check_artifact;
  return Due::nothing;
}

std::optional<Scheduler::TimePoint> Scheduler::next_reconcile() const {
  if (!observed_ || disabled_) return std::nullopt;
  return reconcile_at_;
}

std::optional<Scheduler::TimePoint> Scheduler::next_wake() const {
  if (!observed_ || disabled_) return std::nullopt;
  if (reconcile_at_ && check_at_) return std::min(*reconcile_at_, *check_at_);
  return reconcile_at_ ? reconcile_at_ : check_at_;
}

std::chrono::seconds Scheduler::backoff_for(int failures) {
  if (failures <= 0) return std::chrono::seconds(0);
  // Doubling from kFirstRetry passes kMaxRetry long before the shift could
  // overflow.
  if (failures > 20) return kMaxRetry;
  return std::min(kFirstRetry * (std::int64_t{1} << (failures - 1)), kMaxRetry);
}

void Scheduler::reconcile_now(TimePoint now) {
  stalled_ = false;
  failures_ = 0;
  check_failures_ = 0;
  reconcile_at_ = now;
  check_at_.reset();
}

}  // namespace fluxop::daemon
