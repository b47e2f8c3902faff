#include "core/daemon/daemon.h"

#include <malloc.h>
#include <poll.h>

#include <algorithm>
#include <chrono>

namespace fluxop::daemon {

namespace {

using Clock = std::chrono::steady_clock;

// How long the source must stay quiet before it is read: an editor's
// save or a ConfigMap's swap is several changes in a row.
constexpr std::chrono::milliseconds kSettle{100};

// The operator's default reporting interval.
constexpr std::chrono::minutes kReportEvery{5};

std::string seconds_text(Clock::duration elapsed) {
  double seconds = std::chrono::duration<double>(elapsed).count();
  char text[32];
  std::snprintf(text, sizeof text, "%.3fs", seconds);
  return text;
}

}  // namespace

Daemon::Daemon(InstanceSource& source, DaemonActions actions, Logger& log, Metrics& metrics,
               int stop_fd, std::function<bool()> stopping)
    : source_(source),
      actions_(std::move(actions)),
      log_(log),
      metrics_(metrics),
      stop_fd_(stop_fd),
      stopping_(std::move(stopping)) {}

void Daemon::run() {
  observe();
  started_ = true;
  while (!stopping_()) {
    Due due = observed_.flux ? schedule_.due(Clock::now()) : Due::nothing;
    if (due == Due::reconcile) {
      reconcile();
    } else if (due == Due::check_artifact) {
      check_artifact();
    } else if (observed_.flux && actions_.report && Clock::now() >= next_report_) {
      report();
    } else {
      wait();
    }
  }
}

void Daemon::observe() {
  Observed observed = source_.read();
  if (!observed.flux) {
    if (!observed.problem.empty() && observed.problem != reported_problem_) {
      log_.error("cannot read the FluxInstance", observed.problem);
      reported_problem_ = observed.problem;
    }
    // A file that stopped parsing leaves the instance applied as it was; an
    // object that is gone has nothing left to reconcile. An object that does
    // not load is not what the last reconcile applied: reconciling that
    // again would report its generation Ready; its failure is said on it
    // instead, and nothing is reconciled until it changes.
    if (observed.missing) {
      observed_ = std::move(observed);
      metrics_.clear_instance();
    } else if (!observed.key.empty()) {
      if (observed.key != unreadable_key_) actions_.unreadable(observed);
      unreadable_key_ = observed.key;
      observed_ = std::move(observed);
    }
    return;
  }
  reported_problem_.clear();
  const instance::FluxInstance& flux = *observed.flux;
  if (observed.key != warned_key_) {
    for (const std::string& warning : observed.warnings) log_.info("warning: " + warning);
    intervals_ = read_intervals(flux, [this](const std::string& warning) { log_.info(warning); });
    warned_key_ = observed.key;
  }
  // Being deleted, a disabled instance is released (the uninstall's part).
  bool disabled = reconcile_disabled(flux) && !observed.deleting;
  Observation change = schedule_.observe(observed.key, intervals_, disabled, Clock::now());
  observed_ = std::move(observed);
  if (observed_.deleting && change != Observation::unchanged) {
    log_.info("the FluxInstance is being deleted: uninstalling");
  } else if (change == Observation::disabled) {
    log_.error("can't reconcile instance", message(Reason::reconciliation_disabled), {});
    actions_.event(observed_,
                   {Reason::reconciliation_disabled, message(Reason::reconciliation_disabled), ""});
    actions_.disabled(observed_);
  } else if (change == Observation::enabled) {
    log_.info("Reconciliation is enabled");
  } else if (change == Observation::changed) {
    log_.info("the FluxInstance changed: reconciling");
  } else if (change == Observation::first) {
    log_.info("reconciling the FluxInstance");
  }
  if (disabled) export_instance("", std::nullopt);
}

void Daemon::uninstall() {
  Outcome outcome = Outcome::succeeded;
  try {
    actions_.uninstall(observed_);
  } catch (const std::exception& e) {
    outcome = stopping_() ? Outcome::interrupted : Outcome::failed;
    log_.error("Uninstall error", e.what());
  }
  schedule_.reconciled(outcome, Clock::now(), /*has_artifact=*/false);
}

void Daemon::reconcile() {
  if (observed_.deleting) {
    uninstall();
    return;
  }
  auto started = Clock::now();
  Outcome outcome;
  try {
    applied_ = actions_.reconcile(observed_);
    outcome = Outcome::succeeded;
    metrics_.observe_reconcile(intervals_.every.count() > 0 ? "requeue_after" : "success",
                               Clock::now() - started);
    export_instance("True", Reason::reconciliation_succeeded);
    next_report_ = Clock::now();  // what it changed, reported at once
    log_.info("Reconciliation finished in " + seconds_text(Clock::now() - started),
              {{"revision", applied_.revision}, {"requests", applied_.requests}});
  } catch (const reconcile::ReconcileError& e) {
    outcome = stopping_() ? Outcome::interrupted : failure_outcome(e.failure());
    metrics_.observe_reconcile("error", Clock::now() - started);
    export_instance("False", e.reason());
    log_.error("Reconciler error", e.what(), {{"reason", std::string(name(e.reason()))}});
  } catch (const reconcile::StaleRender& e) {
    // Another apply changed the instance while this one waited for the
    // lock: it is read again below, and reconciled at once when the watch
    // has the new generation (else after the first retry's backoff).
    outcome = stopping_() ? Outcome::interrupted : Outcome::failed;
    log_.info(e.what());
    schedule_.reconciled(outcome, Clock::now(), !applied_.artifact_digest.empty());
    observe();
    return;
  } catch (const std::exception& e) {
    // Retried like any failure: the daemon outlives a bad reconcile.
    outcome = stopping_() ? Outcome::interrupted : Outcome::failed;
    metrics_.observe_reconcile("error", Clock::now() - started);
    log_.error("Reconciler error", e.what());
  }
  schedule_.reconciled(outcome, Clock::now(), !applied_.artifact_digest.empty());
  // A reconcile parses megabytes that are freed after it: given back, so
  // that an idle daemon holds only what it keeps.
  malloc_trim(0);
}

void Daemon::check_artifact() {
  ArtifactCheck result;
  try {
    std::string digest = actions_.artifact_digest(*observed_.flux);
    if (digest == applied_.artifact_digest) {
      result = ArtifactCheck::same;
    } else {
      log_.info("artifact revision changed, requesting a reconciliation",
                {{"old", applied_.artifact_digest}, {"new", digest}});
      result = ArtifactCheck::changed;
    }
  } catch (const std::exception& e) {
    std::string message = std::string("fetch failed: ") + e.what();
    log_.error("artifact check failed", message);
    actions_.event(observed_, {Reason::artifact_failed, message, ""});
    result = ArtifactCheck::failed;
  }
  schedule_.artifact_checked(result, Clock::now());
}

void Daemon::report() {
  next_report_ = Clock::now() + kReportEvery;
  std::optional<std::chrono::system_clock::time_point> next;
  if (std::optional<Clock::time_point> due = schedule_.next_reconcile()) {
    next = std::chrono::system_clock::now() +
           std::chrono::duration_cast<std::chrono::system_clock::duration>(
               std::max(*due - Clock::now(), Clock::duration::zero()));
  }
  try {
    actions_.report(observed_, next);
  } catch (const std::exception& e) {
    log_.error("report failed", e.what());
  }
}

void Daemon::wait() {
  int timeout = -1;
  std::optional<Clock::time_point> wake = observed_.flux ? schedule_.next_wake() : std::nullopt;
  if (observed_.flux && actions_.report) wake = std::min(wake.value_or(next_report_), next_report_);
  if (wake) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*wake - Clock::now());
    timeout = static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 24 * 3600 * 1000));
  }
  pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {source_.change_fd(), POLLIN, 0}};
  if (poll(fds, 2, timeout) <= 0 || !(fds[1].revents & POLLIN)) return;
  // Let a burst of changes end; a stop still ends the wait.
  poll(fds, 1, static_cast<int>(kSettle.count()));
  if (!stopping_()) observe();
}

void Daemon::export_instance(const std::string& ready, std::optional<Reason> reason) {
  if (!observed_.flux) return;
  const instance::FluxInstance& flux = *observed_.flux;
  InstanceInfo info;
  info.uid = observed_.uid.empty() ? applied_.uid : observed_.uid;
  info.name = flux.name;
  info.ns = flux.ns;
  info.ready = ready.empty() ? exported_ready_ : ready;
  info.reason = ready.empty() ? exported_reason_ : reason;
  info.registry = flux.distribution.registry;
  info.revision = applied_.revision;
  info.suspended = reconcile_disabled(flux);
  exported_ready_ = info.ready;
  exported_reason_ = info.reason;
  metrics_.set_instance(info);
}

}  // namespace fluxop::daemon
