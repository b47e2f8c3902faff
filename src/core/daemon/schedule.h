// When the daemon reconciles its FluxInstance and checks the distribution
// artifact for a new digest, as the Flux Operator's two controllers for the
// instance schedule it: a reconcile on every change and then every
// reconcileEvery (jittered), failures retried with exponential backoff, a
// build failure left alone until the instance changes, an artifact check every
// reconcileArtifactEvery while the instance is ready, nothing while the
// reconcile annotation says disabled.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/instance/instance.h"
#include "core/reconcile/status.h"

namespace fluxop::daemon {

// How often the instance is reconciled and its artifact checked; zero means
// never (but for changes).
struct Intervals {
  std::chrono::seconds every{3600};
  std::chrono::seconds artifact_every{600};
};

// The intervals the annotations fluxcd.controlplane.io/reconcileEvery and
// fluxcd.controlplane.io/reconcileArtifactEvery set (Go durations; a fraction
// of a second counts as one). An unparsable or negative one is `warn`ed
// about and the default used.
Intervals read_intervals(const instance::FluxInstance& flux,
                         const std::function<void(const std::string&)>& warn);

// Whether the annotation fluxcd.controlplane.io/reconcile is "disabled", in
// any case.
bool reconcile_disabled(const instance::FluxInstance& flux);

// How a reconcile ended, for what comes next.
enum class Outcome {
  succeeded,
  failed,       // retried with backoff
  stalled,      // retrying cannot help: wait until the instance changes
  interrupted,  // the daemon is stopping: the schedule stays as it was
};

// The outcome of a reconcile that failed so: a build failure stalls (the
// operator's terminal error), every other failure is retried.
Outcome failure_outcome(reconcile::Failure failure);

enum class ArtifactCheck {
  same,     // the digest applied last
  changed,  // a new digest: reconcile
  failed,   // the registry could not say: retried with backoff
};

// What a new reading of the instance changed, for the caller to log and to
// record the ReconciliationDisabled event once per transition.
// `first`: the first reading, which nothing changed since (the daemon's start).
enum class Observation { unchanged, first, changed, disabled, enabled };

// What is to be done now; a reconcile before an artifact check.
enum class Due { nothing, reconcile, check_artifact };

// A state machine over times the caller gives (it reads no clock). One loop
// drives it: observe() whenever the instance is read, due() and next_wake()
// to know when to act, reconciled() and artifact_checked() after acting.
class Scheduler {
 public:
  // A value in [-1, 1] per interval, the fraction of the jitter applied.
  using JitterSource = std::function<double()>;
  using TimePoint = std::chrono::steady_clock::time_point;

  // The operator's defaults: ±5% of reconcileEvery, retries after 1s doubling
  // up to 15m.
  static constexpr double kJitter = 0.05;
  static constexpr std::chrono::seconds kFirstRetry{1};
  static constexpr std::chrono::seconds kMaxRetry{15 * 60};

  // Jitter from a PRNG seeded at random unless `jitter` is given.
  explicit Scheduler(JitterSource jitter = {});

  // `key` identifies what a reconcile depends on (the spec and annotations):
  // a new key makes a reconcile due now, whatever failed or stalled before.
  Observation observe(const std::string& key, const Intervals& intervals, bool disabled,
                      TimePoint now);
  // `has_artifact`: the reconcile pulled a distribution artifact, whose
  // digest is then checked every artifact_every.
  void reconciled(Outcome outcome, TimePoint now, bool has_artifact = false);
  void artifact_checked(ArtifactCheck result, TimePoint now);

  Due due(TimePoint now) const;
  // When the next reconcile is due (a change's, the interval's, a retry's);
  // nullopt when none will be until the instance changes.
  std::optional<TimePoint> next_reconcile() const;
  // The earliest time something is due; nullopt when nothing will be until
  // the instance changes (disabled, stalled, or no interval).
  std::optional<TimePoint> next_wake() const;

  // The wait before the retry of the failed reconcile pending; zero when the
  // last reconcile did not fail.
  std::chrono::seconds backoff() const { return backoff_for(failures_); }
  bool stalled() const { return stalled_; }

 private:
  static std::chrono::seconds backoff_for(int failures);
  // After the reconcile a change asked for: due now, no backoff, no check.
  void reconcile_now(TimePoint now);

  JitterSource jitter_;
  bool observed_ = false;
  std::string key_;
  Intervals intervals_;
  bool disabled_ = false;
  bool stalled_ = false;
  std::optional<TimePoint> reconcile_at_;
  std::optional<TimePoint> check_at_;  // only after a successful reconcile
  int failures_ = 0;                   // consecutive failed reconciles
  int check_failures_ = 0;             // consecutive failed artifact checks
};

}  // namespace fluxop::daemon
