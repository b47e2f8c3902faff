#include "core/daemon/schedule.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

using fluxop::daemon::ArtifactCheck;
using fluxop::daemon::Due;
using fluxop::daemon::Intervals;
using fluxop::daemon::Observation;
using fluxop::daemon::Outcome;
using fluxop::daemon::Scheduler;
using namespace std::chrono_literals;

namespace {

using TimePoint = Scheduler::TimePoint;

const TimePoint t0 = TimePoint{} + 1000h;

fluxop::instance::FluxInstance annotated(fluxop::instance::StringMap annotations) {
  fluxop::instance::FluxInstance flux;
  flux.annotations = std::move(annotations);
  return flux;
}

Intervals read(fluxop::instance::StringMap annotations, std::vector<std::string>* warnings) {
  return fluxop::daemon::read_intervals(
      annotated(std::move(annotations)),
      [&](const std::string& warning) { warnings->push_back(warning); });
}

// A scheduler whose jitter is `fraction` every time.
Scheduler fixed_jitter(double fraction) {
  return Scheduler([fraction] { return fraction; });
}

// A scheduler that has reconciled `key` successfully at t0.
Scheduler succeeded_at_t0(const Intervals& intervals, bool has_artifact) {
  Scheduler scheduler = fixed_jitter(0);
  scheduler.observe("k1", intervals, false, t0);
  scheduler.reconciled(Outcome::succeeded, t0, has_artifact);
  return scheduler;
}

}  // namespace

TEST_CASE("daemon schedule: intervals from the annotations, defaults when absent") {
  std::vector<std::string> warnings;
  Intervals defaults = read({}, &warnings);
  CHECK(defaults.every == 1h);
  CHECK(defaults.artifact_every == 10min);

  Intervals set = read({{"fluxcd.controlplane.io/reconcileEvery", "1h30m"},
                        {"fluxcd.controlplane.io/reconcileArtifactEvery", "30s"}},
                       &warnings);
  CHECK(set.every == 90min);
  CHECK(set.artifact_every == 30s);

  Intervals never = read({{"fluxcd.controlplane.io/reconcileEvery", "0s"},
                          {"fluxcd.controlplane.io/reconcileArtifactEvery", "0"}},
                         &warnings);
  CHECK(never.every == 0s);
  CHECK(never.artifact_every == 0s);

  // Rounded up: a sub-second interval must not become "never".
  CHECK(read({{"fluxcd.controlplane.io/reconcileEvery", "500ms"}}, &warnings).every == 1s);
  CHECK(warnings.empty());
}

TEST_CASE("daemon schedule: an unparsable or negative interval is a warning, then the default") {
  std::vector<std::string> warnings;
  Intervals intervals = read({{"fluxcd.controlplane.io/reconcileEvery", "abc"},
                              {"fluxcd.controlplane.io/reconcileArtifactEvery", "-5m"}},
                             &warnings);
  CHECK(intervals.every == 1h);
  CHECK(intervals.artifact_every == 10min);
  CHECK(warnings == std::vector<std::string>{
                        "annotation fluxcd.controlplane.io/reconcileEvery: 'abc' is not a "
                        "duration, using 1h",
                        "annotation fluxcd.controlplane.io/reconcileArtifactEvery: '-5m' is not a "
                        "duration, using 10m"});

  // Without a warning callback the default is still used.
  CHECK(fluxop::daemon::read_intervals(
            annotated({{"fluxcd.controlplane.io/reconcileEvery", "abc"}}), {})
            .every == 1h);
}

TEST_CASE("daemon schedule: reconcile disabled by the annotation, in any case") {
  using fluxop::daemon::reconcile_disabled;
  CHECK_FALSE(reconcile_disabled(annotated({})));
  CHECK(reconcile_disabled(annotated({{"fluxcd.controlplane.io/reconcile", "disabled"}})));
  CHECK(reconcile_disabled(annotated({{"fluxcd.controlplane.io/reconcile", "Disabled"}})));
  CHECK(reconcile_disabled(annotated({{"fluxcd.controlplane.io/reconcile", "DISABLED"}})));
  CHECK_FALSE(reconcile_disabled(annotated({{"fluxcd.controlplane.io/reconcile", "enabled"}})));
  CHECK_FALSE(reconcile_disabled(annotated({{"fluxcd.controlplane.io/reconcile", "disabled "}})));
}

TEST_CASE("daemon schedule: BuildFailed stalls, every other failure is retried") {
  using fluxop::daemon::failure_outcome;
  using fluxop::reconcile::Failure;
  CHECK(failure_outcome(Failure::build) == Outcome::stalled);
  CHECK(failure_outcome(Failure::artifact) == Outcome::failed);
  CHECK(failure_outcome(Failure::reconciliation) == Outcome::failed);
  CHECK(failure_outcome(Failure::health_check) == Outcome::failed);
}

TEST_CASE("daemon schedule: nothing is due before the instance is observed") {
  Scheduler scheduler = fixed_jitter(0);
  CHECK(scheduler.due(t0) == Due::nothing);
  CHECK(scheduler.next_wake() == std::nullopt);
}

TEST_CASE("daemon schedule: the first observation and each change make a reconcile due now") {
  Scheduler scheduler = fixed_jitter(0);
  CHECK(scheduler.observe("k1", {}, false, t0) == Observation::first);
  CHECK(scheduler.due(t0) == Due::reconcile);
  CHECK(scheduler.next_wake() == t0);

  scheduler.reconciled(Outcome::succeeded, t0);
  CHECK(scheduler.observe("k1", {}, false, t0 + 1min) == Observation::unchanged);
  CHECK(scheduler.due(t0 + 1min) == Due::nothing);
  CHECK(scheduler.observe("k2", {}, false, t0 + 2min) == Observation::changed);
  CHECK(scheduler.due(t0 + 2min) == Due::reconcile);
  CHECK(scheduler.next_wake() == t0 + 2min);
}

TEST_CASE("daemon schedule: after a success the next reconcile is every ± 5%") {
  for (double fraction : {-1.0, 0.0, 0.5, 1.0}) {
    CAPTURE(fraction);
    Scheduler scheduler = fixed_jitter(fraction);
    scheduler.observe("k1", {.every = 1h, .artifact_every = 10min}, false, t0);
    scheduler.reconciled(Outcome::succeeded, t0);
    std::chrono::duration<double> expected = std::chrono::seconds(1h) * (1 + 0.05 * fraction);
    CHECK(scheduler.next_wake() == t0 + std::chrono::duration_cast<TimePoint::duration>(expected));
    CHECK(scheduler.due(*scheduler.next_wake() - 1ns) == Due::nothing);
    CHECK(scheduler.due(*scheduler.next_wake()) == Due::reconcile);
  }

  // A jitter source out of its range is held to it.
  Scheduler wild = fixed_jitter(7);
  Scheduler most = fixed_jitter(1);
  for (Scheduler* scheduler : {&wild, &most}) {
    scheduler->observe("k1", {}, false, t0);
    scheduler->reconciled(Outcome::succeeded, t0);
  }
  CHECK(wild.next_wake() == most.next_wake());
}

TEST_CASE("daemon schedule: the next reconcile, not the artifact check, none while disabled") {
  Scheduler scheduler = fixed_jitter(0);
  CHECK_FALSE(scheduler.next_reconcile());
  scheduler.observe("k1", {.every = 1h, .artifact_every = 10min}, false, t0);
  CHECK(scheduler.next_reconcile() == t0);
  scheduler.reconciled(Outcome::succeeded, t0, /*has_artifact=*/true);
  CHECK(scheduler.next_wake() == t0 + 10min);
  CHECK(scheduler.next_reconcile() == t0 + 1h);
  scheduler.observe("k1", {.every = 1h, .artifact_every = 10min}, true, t0);
  CHECK_FALSE(scheduler.next_reconcile());
}

TEST_CASE("daemon schedule: the default jitter stays within ± 5% and varies") {
  Scheduler scheduler;
  scheduler.observe("k1", {.every = 100s, .artifact_every = 0s}, false, t0);
  std::vector<TimePoint::duration> waits;
  for (int i = 0; i < 200; ++i) {
    scheduler.reconciled(Outcome::succeeded, t0);
    waits.push_back(*scheduler.next_wake() - t0);
  }
  for (TimePoint::duration wait : waits) {
    CHECK(wait >= 95s);
    CHECK(wait <= 105s);
  }
  CHECK(std::count(waits.begin(), waits.end(), waits.front()) < 200);
}

TEST_CASE("daemon schedule: every 0 reconciles only on changes") {
  Scheduler scheduler = succeeded_at_t0({.every = 0s, .artifact_every = 0s}, true);
  CHECK(scheduler.next_wake() == std::nullopt);
  CHECK(scheduler.due(t0 + 1000h) == Due::nothing);

  // The artifact check goes on without periodic reconciles.
  Scheduler checking = succeeded_at_t0({.every = 0s, .artifact_every = 10min}, true);
  CHECK(checking.next_wake() == t0 + 10min);
  CHECK(checking.due(t0 + 10min) == Due::check_artifact);
}

TEST_CASE("daemon schedule: failures retried after 1s doubling to 15m, reset by a success") {
  Scheduler scheduler = fixed_jitter(0);
  scheduler.observe("k1", {}, false, t0);
  CHECK(scheduler.backoff() == 0s);
  std::vector<std::chrono::seconds> expected{1s,   2s,   4s,   8s,   16s,  32s, 64s,
                                             128s, 256s, 512s, 900s, 900s, 900s};
  TimePoint now = t0;
  for (std::chrono::seconds wait : expected) {
    scheduler.reconciled(Outcome::failed, now);
    CHECK(scheduler.backoff() == wait);
    CHECK(scheduler.next_wake() == now + wait);
    CHECK(scheduler.due(now + wait - 1ns) == Due::nothing);
    now += wait;
    CHECK(scheduler.due(now) == Due::reconcile);
  }
  // Far beyond any shift width, still the cap.
  for (int i = 0; i < 100; ++i) scheduler.reconciled(Outcome::failed, now);
  CHECK(scheduler.backoff() == 15min);

  scheduler.reconciled(Outcome::succeeded, now);
  CHECK(scheduler.backoff() == 0s);
  scheduler.reconciled(Outcome::failed, now);
  CHECK(scheduler.next_wake() == now + 1s);
}

TEST_CASE("daemon schedule: a change resets the backoff") {
  Scheduler scheduler = fixed_jitter(0);
  scheduler.observe("k1", {}, false, t0);
  for (int i = 0; i < 5; ++i) scheduler.reconciled(Outcome::failed, t0);
  CHECK(scheduler.backoff() == 16s);
  scheduler.observe("k2", {}, false, t0 + 1s);
  CHECK(scheduler.backoff() == 0s);
  CHECK(scheduler.due(t0 + 1s) == Due::reconcile);
  scheduler.reconciled(Outcome::failed, t0 + 1s);
  CHECK(scheduler.next_wake() == t0 + 2s);
}

TEST_CASE("daemon schedule: a stalled instance waits for its key to change") {
  Scheduler scheduler = fixed_jitter(0);
  scheduler.observe("k1", {}, false, t0);
  scheduler.reconciled(Outcome::failed, t0);
  scheduler.reconciled(Outcome::stalled, t0 + 1s);
  CHECK(scheduler.stalled());
  CHECK(scheduler.backoff() == 0s);
  CHECK(scheduler.next_wake() == std::nullopt);
  CHECK(scheduler.due(t0 + 1000h) == Due::nothing);

  CHECK(scheduler.observe("k1", {}, false, t0 + 1h) == Observation::unchanged);
  CHECK(scheduler.stalled());
  CHECK(scheduler.due(t0 + 1h) == Due::nothing);

  CHECK(scheduler.observe("k2", {}, false, t0 + 2h) == Observation::changed);
  CHECK_FALSE(scheduler.stalled());
  CHECK(scheduler.due(t0 + 2h) == Due::reconcile);
}

TEST_CASE("daemon schedule: disabled, nothing is due until enabled, which reconciles at once") {
  Scheduler scheduler = fixed_jitter(0);
  CHECK(scheduler.observe("k1", {}, true, t0) == Observation::disabled);
  CHECK(scheduler.due(t0) == Due::nothing);
  CHECK(scheduler.next_wake() == std::nullopt);
  // Once per transition, whatever else changed meanwhile.
  CHECK(scheduler.observe("k1", {}, true, t0 + 1min) == Observation::unchanged);
  CHECK(scheduler.observe("k2", {}, true, t0 + 2min) == Observation::unchanged);

  CHECK(scheduler.observe("k2", {}, false, t0 + 3min) == Observation::enabled);
  CHECK(scheduler.due(t0 + 3min) == Due::reconcile);
  scheduler.reconciled(Outcome::succeeded, t0 + 3min, true);

  // Disabling a scheduled instance stops both its reconciles and its checks.
  CHECK(scheduler.observe("k3", {}, true, t0 + 4min) == Observation::disabled);
  CHECK(scheduler.next_wake() == std::nullopt);
  CHECK(scheduler.due(t0 + 1000h) == Due::nothing);
  CHECK(scheduler.observe("k3", {}, false, t0 + 5min) == Observation::enabled);
  CHECK(scheduler.due(t0 + 5min) == Due::reconcile);
}

TEST_CASE("daemon schedule: an interrupted reconcile leaves the schedule as it was") {
  Scheduler scheduler = fixed_jitter(0);
  scheduler.observe("k1", {}, false, t0);
  scheduler.reconciled(Outcome::interrupted, t0);
  CHECK(scheduler.due(t0) == Due::reconcile);
  CHECK(scheduler.next_wake() == t0);

  scheduler.reconciled(Outcome::failed, t0);
  scheduler.reconciled(Outcome::failed, t0 + 1s);
  scheduler.reconciled(Outcome::interrupted, t0 + 2s);
  CHECK(scheduler.backoff() == 2s);
  CHECK(scheduler.next_wake() == t0 + 3s);
}

TEST_CASE("daemon schedule: the artifact is checked every artifact_every after a success") {
  Scheduler scheduler = succeeded_at_t0({.every = 1h, .artifact_every = 10min}, true);
  CHECK(scheduler.next_wake() == t0 + 10min);
  CHECK(scheduler.due(t0 + 10min - 1ns) == Due::nothing);
  CHECK(scheduler.due(t0 + 10min) == Due::check_artifact);

  scheduler.artifact_checked(ArtifactCheck::same, t0 + 10min);
  CHECK(scheduler.next_wake() == t0 + 20min);
  CHECK(scheduler.due(t0 + 15min) == Due::nothing);

  scheduler.artifact_checked(ArtifactCheck::changed, t0 + 20min);
  CHECK(scheduler.due(t0 + 20min) == Due::reconcile);
  CHECK(scheduler.next_wake() == t0 + 20min);
  // No check while that reconcile is pending.
  CHECK(scheduler.due(t0 + 59min) == Due::reconcile);
}

TEST_CASE("daemon schedule: a reconcile due wins over an artifact check due") {
  Scheduler scheduler = succeeded_at_t0({.every = 10min, .artifact_every = 10min}, true);
  CHECK(scheduler.next_wake() == t0 + 10min);
  CHECK(scheduler.due(t0 + 10min) == Due::reconcile);
}

TEST_CASE("daemon schedule: no artifact check without an artifact, or with artifact_every 0") {
  CHECK(succeeded_at_t0({.every = 1h, .artifact_every = 10min}, false).next_wake() == t0 + 1h);
  CHECK(succeeded_at_t0({.every = 1h, .artifact_every = 0s}, true).next_wake() == t0 + 1h);
}

TEST_CASE("daemon schedule: no artifact check before a success nor while failing") {
  Scheduler scheduler = fixed_jitter(0);
  scheduler.observe("k1", {.every = 1h, .artifact_every = 10s}, false, t0);
  scheduler.reconciled(Outcome::failed, t0);
  CHECK(scheduler.next_wake() == t0 + 1s);
  scheduler.reconciled(Outcome::succeeded, t0 + 1s, true);
  CHECK(scheduler.next_wake() == t0 + 11s);
  scheduler.reconciled(Outcome::failed, t0 + 2s);
  CHECK(scheduler.next_wake() == t0 + 3s);
  for (int i = 0; i < 10; ++i) scheduler.reconciled(Outcome::failed, t0 + 3s);
  CHECK(scheduler.due(t0 + 11s) == Due::nothing);
}

TEST_CASE("daemon schedule: failed artifact checks retried with their own backoff") {
  Scheduler scheduler = succeeded_at_t0({.every = 1h, .artifact_every = 10min}, true);
  TimePoint now = t0 + 10min;
  for (std::chrono::seconds wait : {1s, 2s, 4s, 8s}) {
    scheduler.artifact_checked(ArtifactCheck::failed, now);
    CHECK(scheduler.next_wake() == now + wait);
    now += wait;
    CHECK(scheduler.due(now) == Due::check_artifact);
  }
  // The reconcile's backoff is not the check's.
  CHECK(scheduler.backoff() == 0s);
  scheduler.artifact_checked(ArtifactCheck::same, now);
  CHECK(scheduler.next_wake() == now + 10min);
  scheduler.artifact_checked(ArtifactCheck::failed, now + 10min);
  CHECK(scheduler.next_wake() == now + 10min + 1s);
}

TEST_CASE("daemon schedule: a change drops a pending artifact check until the next success") {
  Scheduler scheduler = succeeded_at_t0({.every = 1h, .artifact_every = 10min}, true);
  scheduler.artifact_checked(ArtifactCheck::failed, t0 + 10min);
  scheduler.observe("k2", {.every = 1h, .artifact_every = 10min}, false, t0 + 11min);
  scheduler.reconciled(Outcome::failed, t0 + 11min);
  CHECK(scheduler.next_wake() == t0 + 11min + 1s);
  scheduler.reconciled(Outcome::succeeded, t0 + 12min, true);
  CHECK(scheduler.next_wake() == t0 + 22min);
  // The check's backoff started over too.
  scheduler.artifact_checked(ArtifactCheck::failed, t0 + 22min);
  CHECK(scheduler.next_wake() == t0 + 22min + 1s);
}
