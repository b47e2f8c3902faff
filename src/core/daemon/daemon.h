// `fluxopctl apply --watch`: the Flux Operator's reconcile loop for one
// FluxInstance. It reads the instance from its source when it changes,
// reconciles it when the schedule says (a change, the interval, a retry after
// a failure, a new artifact digest), and records what happened in the logs,
// the metrics and the instance's events. Rendering and applying are the
// caller's (DaemonActions): the loop knows when, not how.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "core/daemon/instance_source.h"
#include "core/daemon/log.h"
#include "core/daemon/metrics.h"
#include "core/daemon/schedule.h"
#include "core/reconcile/apply.h"

namespace fluxop::daemon {

// What a successful reconcile applied.
struct Reconciled {
  std::string revision;         // .status.lastAppliedRevision
  std::string artifact_digest;  // of the distribution artifact; empty for a directory
  std::string uid;              // the instance object's
  int requests = 0;             // API requests it took
};

struct DaemonActions {
  // Renders and applies the instance; throws reconcile::ReconcileError (its
  // reason decides whether to retry) or fluxop::Error (retried).
  std::function<Reconciled(const Observed&)> reconcile;
  // The digest the instance's distribution artifact has now.
  std::function<std::string(const instance::FluxInstance&)> artifact_digest;
  // Records an event on the instance (errors are the action's to log).
  std::function<void(const Observed&, const reconcile::InstanceEvent&)> event;
  // Uninstalls what the instance being deleted installed, and releases it
  // (its finalizer); throws fluxop::Error to be retried.
  std::function<void(const Observed&)> uninstall;
  // The instance in the cluster does not load (`problem` says why): said on
  // it (reconcile::record_unreadable), once for each of its keys.
  std::function<void(const Observed&)> unreadable;
  // The instance's reconciliation was just disabled (its status, if never
  // reconciled: reconcile::record_disabled).
  std::function<void(const Observed&)> disabled;
  // Computes the FluxReport of the instance's namespace, writes it and
  // exports its flux_resource_info; `next_reconcile` is when the schedule
  // reconciles next (nullopt: not until the instance changes). Throws
  // fluxop::Error (logged). None: no report.
  std::function<void(const Observed&,
                     std::optional<std::chrono::system_clock::time_point> next_reconcile)>
      report;
};

class Daemon {
 public:
  // `stop_fd` turns readable, and `stopping` true, when the daemon is to
  // stop (SIGTERM, SIGINT).
  Daemon(InstanceSource& source, DaemonActions actions, Logger& log, Metrics& metrics, int stop_fd,
         std::function<bool()> stopping);

  // Until stopped; a reconcile in progress stops at its next safe point.
  void run();
  // The loop has read the instance once (the readiness probe).
  bool started() const { return started_; }

 private:
  // Reads the instance and tells the schedule.
  void observe();
  void reconcile();
  void uninstall();
  void check_artifact();
  // The FluxReport, as the operator refreshes it: at the start, after each
  // successful reconcile, and every kReportEvery.
  void report();
  // Waits until the source changes (and settles), the next deadline, or a stop.
  void wait();
  // flux_instance_info; an empty `ready` keeps the last Ready status.
  void export_instance(const std::string& ready, std::optional<Reason> reason);

  InstanceSource& source_;
  DaemonActions actions_;
  Logger& log_;
  Metrics& metrics_;
  int stop_fd_;
  std::function<bool()> stopping_;
  Scheduler schedule_;
  Observed observed_;
  std::string reported_problem_;  // the last one logged, said once
  std::string warned_key_;        // the key whose warnings were logged
  std::string unreadable_key_;    // the last key said not to load
  Intervals intervals_;
  Reconciled applied_;                      // by the last successful reconcile
  std::string exported_ready_ = "Unknown";  // flux_instance_info's as last exported
  std::optional<Reason> exported_reason_;
  std::chrono::steady_clock::time_point next_report_{};  // the epoch: at once
  std::atomic<bool> started_{false};
};

}  // namespace fluxop::daemon
