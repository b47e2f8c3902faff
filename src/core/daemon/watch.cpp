#include "core/daemon/watch.h"

#include <malloc.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>

#include "core/daemon/daemon.h"
#include "core/daemon/endpoints.h"
#include "core/daemon/leader.h"
#include "core/daemon/status_access.h"
#include "core/daemon/stop_signal.h"
#include "core/file.h"
#include "core/interruption.h"
#include "core/reconcile/events.h"
#include "core/reconcile/instance_object.h"
#include "core/reconcile/instance_requests.h"
#include "core/reconcile/status.h"
#include "core/reconcile/uninstall.h"
#include "core/report/write.h"
#include "core/rfc3339.h"
#include "core/ssa/change_set.h"
#include "core/status/cluster_pages.h"

namespace fluxop::daemon {

namespace {

// The upstream operator's message for a failure before the apply.
std::string failure_message(const reconcile::ReconcileError& error) {
  if (error.failure() == reconcile::Failure::artifact)
    return std::string("fetch failed: ") + error.what();
  if (error.failure() == reconcile::Failure::build)
    return std::string("build failed: ") + error.what();
  return error.what();
}

// A status page, or the reason it is not shown: 401 without a token the API
// server accepts, 403 for a user who may not read the instance, 503 when
// the API server could not be asked (`access` null: every request is shown).
// A details page reads `cluster`.
HttpResponse status_answer(const status::StatusBoard& board, StatusAccess* access,
                           kube::Cluster& cluster, const PageRequest& request) {
  status::PageResponse page;
  if (access) {
    try {
      Access decided = access->decide(request.authorization);
      if (decided == Access::unauthenticated)
        page = status::plain_page(401, "a bearer token the API server accepts is needed");
      else if (decided == Access::forbidden)
        page = status::plain_page(403, "this user may not get the FluxInstance");
    } catch (const Error& error) {
      page = status::plain_page(
          503, std::string("the request's token could not be reviewed: ") + error.what());
    }
  }
  if (page.content_type.empty()) page = board.answer(request.target, &cluster);
  std::vector<std::pair<std::string, std::string>> headers = status::status_headers();
  // RFC 6750: a 401 names the scheme that would be accepted.
  if (page.status == 401) headers.emplace_back("WWW-Authenticate", "Bearer realm=\"fluxopctl\"");
  return HttpResponse{page.status, std::move(page.content_type), std::move(headers),
                      std::move(page.body)};
}

// How long a report may take, its API server outages ridden out included.
constexpr std::chrono::minutes kReportTimeout{2};

// What the daemon needs to act on the cluster, for the whole run.
class DaemonCluster {
 public:
  // `interruption`: what stops the daemon ("interrupted by SIGTERM"), empty
  // while it runs.
  DaemonCluster(const WatchOptions& options, const Logger& log,
                std::function<std::string()> interruption)
      : options_(options),
        log_(log),
        interruption_(std::move(interruption)),
        stopping_([this] { return !interruption_().empty(); }),
        connected_(kube::connect(options.cluster, /*dry_run=*/false, std::nullopt, stopping_)),
        artifacts_(options.registry, options.artifact_cache,
                   [this](const std::string& line) { log_.info(line); }),
        recorder_(*connected_.cluster, [this](const std::string& error) {
          log_.error("cannot record an event", error);
        }) {}

  // Records `event` on the instance, whose uid is read when not known yet.
  void record(const Observed& observed, const reconcile::InstanceEvent& event) {
    const instance::FluxInstance& flux = *observed.flux;
    recorder_.record(reconcile::instance_ref(flux.ns, flux.name), observed.uid, event);
  }

  // The instance in the cluster does not load: as a spec that does not
  // build, BuildFailed on it and an event.
  void mark_unreadable(const Observed& observed) {
    kube::ObjectKey ref = reconcile::instance_ref(options_.ns, "flux");
    reconcile::record_unreadable(*connected_.cluster, ref, "build failed: " + observed.problem,
                                 [&](const reconcile::InstanceEvent& event) {
                                   recorder_.record({ref.name, ref.ns, observed.uid, ""}, event);
                                 });
  }

  void mark_disabled(const Observed& observed) {
    reconcile::record_disabled(*connected_.cluster, *observed.flux);
  }

  // One reconciliation, as `apply` does it, with the daemon's log and events.
  Reconciled reconcile(const Observed& observed, const reconcile::ApplyOptions& base) {
    const instance::FluxInstance& flux = *observed.flux;
    reconcile::ApplyOptions apply = base;
    apply.instance_from_cluster = options_.file.empty();
    apply.generation = observed.generation;
    apply.interruption = interruption_;
    apply.on_progress = [this](const std::string& line) { log_.info(line); };
    apply.on_change = [this](const ssa::Change& change) {
      if (change.action != ssa::Action::Unchanged) log_.info(ssa::change_line(change));
    };
    // The instance's uid as the apply says it: an instance read from a file
    // has none until it is applied (flux_instance_info's uid label).
    std::string uid = observed.uid;
    apply.on_event = [&](const reconcile::InstanceEvent& event) {
      if (!event.uid.empty()) uid = event.uid;
      // In the log too, as the operator's.
      if (event.reason == Reason::outdated_version) log_.info(event.message);
      record(observed, event);
    };
    // A connection per reconcile: an API server outage is retried until the
    // apply's deadline, and discovery is fresh (CRDs change with upgrades).
    kube::Connection connected = kube::connect(
        options_.cluster, /*dry_run=*/false,
        std::chrono::steady_clock::now() + reconcile::apply_timeout(flux, apply.timeout, nullptr),
        stopping_);
    try {
      reconcile::Reconciliation run = reconcile::reconcile_instance(
          *connected.cluster, artifacts_, flux, render_request(), apply,
          [&](const reconcile::RenderedInstance& instance) {
            log_.info("building", {{"revision", instance.rendered.revision}});
          });
      return {run.result.revision, run.instance.artifact_digest, uid,
              connected.cluster->requests()};
    } catch (const reconcile::ReconcileError& e) {
      if (e.failure() == reconcile::Failure::artifact || e.failure() == reconcile::Failure::build) {
        reconcile::record_failure(*connected.cluster, flux, e.failure(), failure_message(e),
                                  apply.on_event);
        throw reconcile::ReconcileError(e.failure(), failure_message(e));
      }
      throw;
    }
  }

  // The uninstall behind the instance's finalizer, as the operator's.
  void uninstall(const Observed& observed) {
    const instance::FluxInstance& flux = *observed.flux;
    reconcile::UninstallOptions uninstall;
    uninstall.behind_finalizer = true;
    uninstall.interruption = interruption_;
    uninstall.on_progress = [this](const std::string& line) { log_.info(line); };
    uninstall.on_change = [this](const ssa::Change& change) {
      log_.info(ssa::change_line(change));
    };
    kube::Connection connected =
        kube::connect(options_.cluster, /*dry_run=*/false,
                      std::chrono::steady_clock::now() + uninstall.timeout, stopping_);
    reconcile::UninstallResult result = reconcile::uninstall_instance(
        *connected.cluster, reconcile::instance_ref(flux.ns, flux.name), uninstall);
    log_.info(result.message, {{"requests", connected.cluster->requests()}});
  }

  // The FluxReport of the instance's namespace, written as `report --write`
  // writes it; its resources exported as flux_resource_info and, with the
  // instance's state, shown by the status pages (`board`, when served).
  void report(const Observed& observed, Metrics& metrics, status::StatusBoard* board,
              std::optional<std::chrono::system_clock::time_point> next_reconcile) {
    const std::string& ns = observed.flux->ns;
    auto started = std::chrono::steady_clock::now();
    // A connection per report: discovery is fresh (CRDs change with upgrades).
    kube::Connection connected =
        kube::connect(options_.cluster, /*dry_run=*/false, started + kReportTimeout, stopping_);
    warn_of_operators(observed, *connected.cluster);
    report::Report computed =
        report::compute(*connected.cluster, ns, options_.cluster.field_manager);
    for (const std::string& error : computed.errors)
      log_.error("report computed with errors", error);
    auto took = std::chrono::steady_clock::now() - started;
    std::string reported_at = utc_rfc3339(std::time(nullptr));
    for (const ssa::Change& change : report::write(*connected.cluster, computed.spec, ns,
                                                   {took, reported_at, started + kReportTimeout})) {
      if (change.action != ssa::Action::Unchanged) log_.info(ssa::change_line(change));
    }
    metrics.set_resources(computed.resources);
    if (board) {
      status::ClusterStatus shown;
      const std::string& context = connected.client->access().context;
      shown.overview.context = context.empty() ? "in-cluster" : context;
      kube::ObjectKey instance = reconcile::instance_ref(ns, observed.flux->name);
      std::optional<nlohmann::json> live =
          reconcile::get_live_instance(*connected.cluster, instance);
      shown.overview.instance = status::instance_state(live ? &*live : nullptr);
      shown.overview.instance.next_reconcile =
          next_reconcile ? utc_rfc3339(std::chrono::system_clock::to_time_t(*next_reconcile))
                         : "none until the instance changes";
      shown.overview.instance.verification =
          options_.registry.verify.enabled
              ? "verified before each apply (--verify): the artifact's and the images' signatures"
              : "not verified: the daemon runs without --verify";
      try {
        shown.overview.events = status::object_events(*connected.cluster, instance);
      } catch (const Error& error) {
        log_.error("cannot list the FluxInstance's Events", error.what());
      }
      shown.overview.report = std::move(computed.spec);
      shown.resources = std::move(computed.resources);
      shown.reported_at = std::move(reported_at);
      board->publish(std::move(shown));
    }
    // What the report read and decoded is freed, in pages glibc keeps for
    // the next one: they go back to the system, so that an idle daemon's
    // memory is what it holds, not the report's peak (10,000 resources).
    computed = {};
    malloc_trim(0);
  }

  // The digest the distribution artifact has now; the layer is pulled into
  // the cache when it is new, which the reconcile it triggers then reads.
  std::string artifact_digest(const instance::FluxInstance& flux) {
    return reconcile::artifact_digest(
        artifacts_, flux, render_request(),
        reconcile::artifact_credentials(
            flux, [this]() -> kube::Cluster& { return *connected_.cluster; }));
  }

 private:
  // An operator reconciling the same instance beside this daemon, neither
  // knowing of the other (without leader election, or on another Lease):
  // each writes over what the other applied and reported. Said in the log
  // and as a Warning event when it starts, and when it is gone.
  void warn_of_operators(const Observed& observed, kube::Cluster& cluster) {
    std::string running;
    try {
      for (const std::string& name : reconcile::running_operators(cluster, observed.flux->ns))
        running += (running.empty() ? "" : ", ") + name;
    } catch (const Error& e) {
      log_.error("cannot list the operator's Deployments", e.what());
      return;
    }
    if (running == warned_operators_) return;
    warned_operators_ = running;
    if (running.empty()) {
      log_.info("no operator Deployment runs beside this daemon any more");
      return;
    }
    std::string message = "an operator runs beside this daemon (" + running +
                          "): both reconcile FluxInstance/" + observed.flux->ns +
                          "/flux and write its status; scale one of them to zero";
    log_.error("another controller reconciles the instance", message);
    record(observed, {Reason::controller_conflict, message, ""});
  }

  // What the pipeline renders, its notices in the log.
  reconcile::RenderRequest render_request() const {
    reconcile::RenderRequest request = options_.render;
    request.notice = [this](const std::string& line) { log_.info(line); };
    return request;
  }

  const WatchOptions& options_;
  const Logger& log_;
  std::function<std::string()> interruption_;
  std::function<bool()> stopping_;
  kube::Connection connected_;
  reconcile::RegistryArtifacts artifacts_;
  reconcile::EventRecorder recorder_;
  std::string warned_operators_;  // the operator Deployments last warned of
};

// Wakes the thread waiting for a change made by another one.
class ScopedEventFd {
 public:
  ScopedEventFd() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (fd_ < 0) throw Error(std::string("eventfd: ") + std::strerror(errno));
  }
  ~ScopedEventFd() { close(fd_); }
  ScopedEventFd(const ScopedEventFd&) = delete;
  ScopedEventFd& operator=(const ScopedEventFd&) = delete;
  void notify() {
    std::uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(fd_, &one, sizeof one);
  }
  // Until notified or `stop_fd` is readable.
  void wait(int stop_fd) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    poll(fds, 2, -1);
    std::uint64_t count;
    [[maybe_unused]] ssize_t n = read(fd_, &count, sizeof count);
  }

 private:
  int fd_;
};

}  // namespace

void run_watch(const WatchOptions& options, std::ostream& log_stream) {
  const reconcile::ApplyOptions& apply = options.apply;
  Logger root(log_stream, options.log_format);
  std::unique_ptr<InstanceSource> source;
  const std::string& ns = options.ns;
  // What watches the instance and elects the leader, each on a thread and
  // with a connection of its own.
  kube::Connection watching = kube::connect(options.cluster, /*dry_run=*/false);
  auto watch_failed = [&root](const std::string& error) {
    root.error("watching the FluxInstance failed", error);
  };
  // Where the instance is: the namespace given, or the file's.
  std::string instance_ns = ns;
  if (options.file.empty()) {
    source = std::make_unique<ClusterSource>(*watching.cluster, ns, watch_failed);
  } else {
    try {
      std::vector<std::string> warnings;
      instance_ns = instance::load_instance_file(options.file, options.load, warnings).ns;
    } catch (const Error&) {
      // Said by the loop's first read; the namespace given meanwhile.
    }
    // The file is the spec; the object in the cluster carries the requests.
    // Before the first apply it may not exist, nor its CRD: said once, not
    // as an error on each of the watch's retries.
    auto requests_unwatched = [&root,
                               said = std::make_shared<std::string>()](const std::string& error) {
      if (error == *said) return;
      *said = error;
      root.info("the FluxInstance's requests are not watched yet", {{"reason", error}});
    };
    source = std::make_unique<WithClusterRequests>(
        std::make_unique<FileSource>(options.file, options.load), *watching.cluster, instance_ns,
        requests_unwatched);
  }
  // The operator's constant fields, which a JSON log's queries may select
  // on; a text log, read by people, is spared them on every line.
  Logger log = options.log_format == LogFormat::json
                   ? root.with({{"controller", "fluxinstance"},
                                {"controllerGroup", "fluxcd.controlplane.io"},
                                {"controllerKind", "FluxInstance"}})
                   : root;
  StopSignal stop;
  auto stopping = [&stop] { return stop.received() != 0; };
  DaemonCluster cluster(options, log, [&stop] {
    int signal = stop.received();
    if (signal < 0) return std::string("stopped: the leader Lease was lost");
    return signal > 0 ? interrupted_by(signal) : std::string();
  });

  DaemonActions actions;
  actions.reconcile = [&](const Observed& observed) { return cluster.reconcile(observed, apply); };
  actions.artifact_digest = [&](const instance::FluxInstance& flux) {
    return cluster.artifact_digest(flux);
  };
  actions.event = [&](const Observed& observed, const reconcile::InstanceEvent& event) {
    cluster.record(observed, event);
  };
  actions.unreadable = [&](const Observed& observed) { cluster.mark_unreadable(observed); };
  actions.disabled = [&](const Observed& observed) { cluster.mark_disabled(observed); };
  actions.uninstall = [&](const Observed& observed) { cluster.uninstall(observed); };
  Metrics metrics;
  std::optional<status::StatusBoard> board;
  if (!options.status_addr.empty()) board.emplace();
  actions.report = [&](const Observed& observed,
                       std::optional<std::chrono::system_clock::time_point> next_reconcile) {
    cluster.report(observed, metrics, board ? &*board : nullptr, next_reconcile);
  };
  Daemon loop(*source, actions, log, metrics, stop.fd(), stopping);

  // Several replicas: one leads (the operator's Lease), the others wait for
  // it; leadership lost stops this one, which must not act any more.
  std::optional<LeaderElection> leader;
  ScopedEventFd leader_changed;
  LeaderOptions election;
  std::string lease = ns + "/" + election.name;
  if (options.leader_elect) {
    election.ns = ns;
    election.lease_duration = options.lease_duration;
    election.renew_deadline = options.renew_deadline;
    election.retry_period = options.retry_period;
    leader.emplace(
        *watching.cluster, election,
        [&] {
          if (leader && leader->lost()) stop.request();
          leader_changed.notify();
        },
        [&root](const std::string& error) { root.error("leader election", error); });
  }

  // Without leader election, a Lease of its own all the same, renewed
  // while it runs: `reconcile` and `resume` know that something answers
  // them (reconcile::find_reconciler).
  std::optional<LeaderElection> presence;
  if (!options.leader_elect) {
    LeaderOptions announced;
    announced.ns = instance_ns;
    announced.name = std::string(reconcile::kWatchLease);
    presence.emplace(
        *watching.cluster, announced, [] {},
        [&root](const std::string& error) { root.error("renewing the daemon's Lease", error); });
  }

  std::optional<EndpointServer> metrics_server, health_server, status_server;
  if (!options.metrics_addr.empty()) {
    metrics_server.emplace("--metrics-addr", options.metrics_addr,
                           EndpointHandlers{.metrics = [&metrics] { return metrics.render(); }});
    root.info("serving metrics", {{"address", options.metrics_addr}});
  }
  if (!options.health_addr.empty()) {
    health_server.emplace(
        "--health-addr", options.health_addr,
        EndpointHandlers{
            .healthy = [] { return true; },
            .ready = [&] { return loop.started() || (leader && !leader->leading()); }});
    root.info("serving health probes", {{"address", options.health_addr}});
  }
  // The details pages' reads and, with --status-auth kubernetes, the
  // reviews go through a connection of the page server's own.
  std::optional<kube::Connection> pages_connection;
  std::optional<StatusAccess> access;
  if (board) pages_connection.emplace(kube::connect(options.cluster, /*dry_run=*/false));
  if (board && options.status_auth) access.emplace(*pages_connection->cluster, instance_ns);
  if (board) {
    status_server.emplace("--status-addr", options.status_addr,
                          EndpointHandlers{.pages = [&](const PageRequest& request) {
                            return status_answer(*board, access ? &*access : nullptr,
                                                 *pages_connection->cluster, request);
                          }});
    root.info("serving the status pages", {{"address", options.status_addr},
                                           {"auth", options.status_auth ? "kubernetes" : "none"}});
  }
  root.info("starting",
            {{"source", options.file.empty() ? "FluxInstance/" + ns + "/flux" : options.file}});
  if (leader) {
    root.info("attempting to acquire the leader Lease",
              {{"lease", lease}, {"identity", leader->identity()}});
    while (!leader->leading() && !stop.received()) leader_changed.wait(stop.fd());
    if (leader->leading()) root.info("acquired the leader Lease", {{"lease", lease}});
  }
  if (!stop.received()) loop.run();
  if (leader && leader->lost()) throw Error("the leader Lease " + lease + " was lost");
  root.info("stopped", {{"signal", stop.received()}});
}

}  // namespace fluxop::daemon
