// `fluxopctl apply`, once (CI) or as a daemon (`--watch`): its flags, and
// the reconcile pipeline or the daemon they run.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include "cli/change_output.h"
#include "cli/cluster_flags.h"
#include "cli/commands.h"
#include "cli/duration_check.h"
#include "cli/fleet.h"
#include "cli/instance_input.h"
#include "cli/interrupt.h"
#include "cli/notice.h"
#include "core/daemon/endpoints.h"
#include "core/daemon/watch.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/plural.h"
#include "core/reconcile/events.h"
#include "core/reconcile/instance_requests.h"
#include "core/reconcile/pipeline.h"
#include "core/reconcile/shared_render.h"
#include "core/ssa/change_set.h"

namespace fluxop::cli {

namespace {

struct WatchFlags {
  bool watch = false;
  bool from_cluster = false;
  std::string ns = "flux-system";
  std::string metrics_addr;
  std::string health_addr;
  std::string status_addr;
  std::string status_auth = "none";
  bool status_insecure = false;
  std::string log_format = "text";
  bool leader_elect = false;
  std::string lease_duration = "35s";
  std::string renew_deadline = "30s";
  std::string retry_period = "5s";
};

struct ApplyCommandOptions {
  InstanceInput input;
  ClusterFlags cluster;
  FleetFlags fleet;
  WatchFlags daemon;
  bool wait = true;
  bool wait_given = false;  // else .spec.wait decides
  std::string timeout;
  ChangeSetFlags writes;
  bool verbose = false;
  bool force = false;
  bool prune_crds = false;
};

// What every apply sets from the flags, once or in the loop.
reconcile::ApplyOptions apply_options(const ApplyCommandOptions& options) {
  reconcile::ApplyOptions apply;
  if (options.wait_given) apply.wait = options.wait;
  if (!options.timeout.empty()) apply.timeout = duration_flag(options.timeout);
  apply.lock_timeout = duration_flag(options.writes.lock_timeout);
  apply.force = options.force;
  apply.prune_crds = options.prune_crds;
  return apply;
}

// What every apply renders, once or in the loop: with --verify, the images
// the instance installs are verified too, before anything is written.
reconcile::RenderRequest apply_render_request(const ApplyCommandOptions& options) {
  reconcile::RenderRequest request = render_request(options.input, /*revision=*/true);
  request.verify_images = options.input.registry.verify.enabled;
  return request;
}

// Until when an apply of `flux` may wait for an API server that restarts
// mid-apply: what is applied so far must not be left half-done for a blip.
std::chrono::steady_clock::time_point retry_until(const ApplyCommandOptions& options,
                                                  const instance::FluxInstance& flux) {
  return std::chrono::steady_clock::now() +
         reconcile::apply_timeout(flux, apply_options(options).timeout, nullptr);
}

// The apply on one cluster of the instance `render` renders once for all:
// its progress noticed, its changes to `on_change`, the daemon's events
// recorded, so that the instance tells the same story whichever applied it
// last; `rendered` hears of the render before anything is written.
reconcile::ApplyResult apply_on(const ApplyCommandOptions& options, kube::Cluster& cluster,
                                reconcile::SharedRender& render,
                                std::function<void(const ssa::Change&)> on_change,
                                const std::function<void(const RenderedInstance&)>& rendered) {
  reconcile::ApplyOptions apply = apply_options(options);
  apply.preflight = true;
  apply.interruption = interruption;
  apply.on_progress = print_notice;
  apply.wait_status = stderr_wait_status();
  apply.on_change = std::move(on_change);
  // A caller who may not create Events still applies: one warning says they
  // are missing. (The policy warns about a bad annotation; it is not said
  // twice.)
  bool warned = false;
  reconcile::EventRecorder events(cluster, [&warned](const std::string& error) {
    if (!std::exchange(warned, true)) print_warning("events not recorded: " + error);
  });
  const RenderedInstance& instance = render.get([&]() -> kube::Cluster& { return cluster; });
  rendered(instance);
  kube::ObjectKey ref = reconcile::instance_ref(instance.flux.ns, instance.flux.name);
  apply.on_event = [&](const reconcile::InstanceEvent& event) {
    events.record(ref, event.uid, event);
  };
  reconcile::ApplyResult result = reconcile::apply_rendered(cluster, instance, apply);
  // A dry run reconciled nothing: it says what would change.
  if (cluster.dry_run()) result.message = dry_run_summary(result.changes);
  print_notice(result.message + " (" + count_of(cluster.requests(), "API request") + ")");
  return result;
}

// On several clusters, batch after batch when --batch-size says so: each
// one's progress and changes prefixed by its context, then the summary; with
// -o json one document keyed by context.
void run_fleet_apply(const ApplyCommandOptions& options, const std::vector<std::string>& contexts) {
  if (options.fleet.stop_on_failure && options.fleet.batch_size == 0)
    throw CLI::ValidationError("--stop-on-failure", "only with --batch-size");
  instance::FluxInstance flux = load_input(options.input);
  std::chrono::steady_clock::time_point deadline = retry_until(options, flux);
  reconcile::RegistryArtifacts artifacts = registry_artifacts(options.input.registry);
  reconcile::SharedRender render(artifacts, std::move(flux), apply_render_request(options),
                                 say_distribution);
  std::vector<std::string> revisions(contexts.size());
  std::vector<std::vector<ssa::Change>> changes(contexts.size());
  bool dry_run = options.writes.server_dry_run();
  std::string suffix = dry_run ? " (server dry run)" : "";
  std::vector<fleet::ClusterResult> results =
      run_fleet(contexts, options.cluster, options.fleet, [&](const FleetMember& member) {
        ConnectedCluster connected = kube::connect(member.settings, dry_run, deadline, interrupted);
        std::vector<ssa::Change>& mine = changes[member.index];
        auto on_change = [&](const ssa::Change& change) {
          mine.push_back(change);
          if (options.writes.json() ||
              (change.action == ssa::Action::Unchanged && !options.verbose))
            return;
          print_notice(ssa::change_line(change) + suffix);
        };
        reconcile::ApplyResult result = apply_on(
            options, *connected.cluster, render, on_change, [&](const RenderedInstance& instance) {
              revisions[member.index] = instance.rendered.revision;
            });
        return fleet::ClusterResult{fleet::Outcome::ok, result.message};
      });
  if (options.writes.json()) {
    nlohmann::json document = nlohmann::json::object();
    for (std::size_t i = 0; i < contexts.size(); ++i) {
      document[contexts[i]] = {{"status", fleet::outcome_name(results[i].outcome)},
                               {"message", results[i].message},
                               {"dryRun", dry_run},
                               {"revision", revisions[i]},
                               {"changes", ssa::change_set_json(changes[i])}};
    }
    std::cout << printable_json(document.dump(4)) << "\n";
  } else {
    print_fleet_summary(contexts, results, {"REVISION", "CHANGES"}, [&](std::size_t i) {
      std::size_t changed = 0;
      for (const ssa::Change& change : changes[i])
        changed += change.action != ssa::Action::Unchanged;
      return std::vector<std::string>{revisions[i], std::to_string(changed)};
    });
  }
  exit_with(results, /*diff=*/false);
}

void run_apply(const ApplyCommandOptions& options) {
  if (std::vector<std::string> contexts = fleet_contexts(options.cluster, options.fleet);
      !contexts.empty()) {
    run_fleet_apply(options, contexts);
    return;
  }
  if (options.fleet.batch_size > 0 || options.fleet.stop_on_failure)
    throw CLI::ValidationError("--batch-size", "only with several contexts");
  instance::FluxInstance flux = load_input(options.input);
  ConnectedCluster connected = connect(options.cluster, options.writes.server_dry_run(),
                                       retry_until(options, flux), interrupted);
  catch_interrupts();

  ChangeSetOutput output(options.writes, options.verbose);
  output.run([&] {
    run_interruptible([&] {
      reconcile::RegistryArtifacts artifacts = registry_artifacts(options.input.registry);
      reconcile::SharedRender render(artifacts, std::move(flux), apply_render_request(options));
      reconcile::ApplyResult result =
          apply_on(options, *connected.cluster, render, output.on_change(),
                   [&](const RenderedInstance& instance) {
                     say_distribution(instance);
                     output.document()["revision"] = instance.rendered.revision;
                   });
      output.document()["message"] = result.message;
    });
  });
}

// `apply --watch`: the reconcile loop, until SIGTERM or SIGINT.
void run_watch(const ApplyCommandOptions& options) {
  const WatchFlags& flags = options.daemon;
  daemon::WatchOptions watch;
  watch.cluster = options.cluster;
  watch.registry = options.input.registry;
  watch.artifact_cache = artifact_cache_root();
  if (!flags.from_cluster)
    watch.file = options.input.filename.empty() ? options.input.file : options.input.filename;
  watch.load.allow_unknown_fields = options.input.allow_unknown_fields;
  watch.ns = flags.ns;
  watch.render = apply_render_request(options);
  watch.apply = apply_options(options);
  watch.metrics_addr = flags.metrics_addr;
  watch.health_addr = flags.health_addr;
  watch.status_addr = flags.status_addr;
  watch.status_auth = flags.status_auth == "kubernetes";
  watch.log_format = flags.log_format == "json" ? daemon::LogFormat::json : daemon::LogFormat::text;
  watch.leader_elect = flags.leader_elect;
  watch.lease_duration = duration_flag(flags.lease_duration);
  watch.renew_deadline = duration_flag(flags.renew_deadline);
  watch.retry_period = duration_flag(flags.retry_period);
  daemon::run_watch(watch, std::cerr);
}

}  // namespace

void add_apply_command(CLI::App& app, yaml::ParseCache& parse_cache) {
  auto options = std::make_shared<ApplyCommandOptions>();
  options->input.parse_cache = &parse_cache;
  auto* cmd = app.add_subcommand(
      "apply",
      "Install or upgrade Flux on a cluster from a FluxInstance: server-side apply in stages, "
      "pruning against the instance's inventory, health checks, status");
  add_instance_flags(*cmd, options->input);
  add_artifact_verify_flags(*cmd, options->input.registry);
  options->input.mode = render::Mode::operator_controller;
  add_cluster_flags(*cmd, options->cluster);
  FleetFlags& fleet = options->fleet;
  add_fleet_flags(*cmd, fleet);
  cmd->add_option("--batch-size", fleet.batch_size,
                  "With several contexts: apply to this many clusters at a time, in the "
                  "contexts' order, each batch waiting for Ready before the next (a canary)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{10000}))
      ->option_text("N");
  cmd->add_flag("--stop-on-failure", fleet.stop_on_failure,
                "With --batch-size: start no batch after one where a cluster failed");
  CLI::Option* wait =
      cmd->add_flag("--wait,!--no-wait", options->wait,
                    "Wait for the components to roll out (default: .spec.wait, true unless set; "
                    "--wait=false or --no-wait not to)");
  cmd->add_option("--timeout", options->timeout,
                  "How long to wait for the components (default: the reconcileTimeout "
                  "annotation, else 5m)")
      ->check(duration_check("5m"))
      ->option_text("DURATION");
  add_change_set_flags(*cmd, options->writes);
  cmd->add_flag("-v,--verbose", options->verbose, "Also list unchanged objects");
  cmd->add_flag("--force", options->force,
                "Apply an instance whose reconciliation is disabled (fluxopctl suspend, the " +
                    std::string(reconcile::kReconcileAnnotation) + ": disabled annotation)");
  add_prune_crds_flag(*cmd, options->prune_crds);
  WatchFlags& daemon = options->daemon;
  cmd->add_flag(
      "--watch", daemon.watch,
      "Keep the instance applied, as the Flux Operator does: reconcile when it changes, every "
      "reconcileEvery, when its distribution artifact changes; until SIGTERM or SIGINT");
  CLI::Option* from_cluster = cmd->add_flag(
      "--from-cluster", daemon.from_cluster,
      "With --watch: the FluxInstance `flux` in the cluster (--namespace), watched, instead of "
      "FILE");
  CLI::Option* ns = cmd->add_option("-n,--namespace", daemon.ns,
                                    "With --from-cluster: the instance's namespace; with "
                                    "--enable-leader-election: the Lease's")
                        ->option_text("NAMESPACE (default flux-system)");
  CLI::Option* metrics = cmd->add_option("--metrics-addr", daemon.metrics_addr,
                                         "With --watch: serve /metrics (Prometheus) on this "
                                         "address, e.g. :8080 (default: off)")
                             ->option_text("HOST:PORT");
  CLI::Option* health = cmd->add_option("--health-addr", daemon.health_addr,
                                        "With --watch: serve /healthz and /readyz on this "
                                        "address, e.g. :8081 (default: off)")
                            ->option_text("HOST:PORT");
  CLI::Option* status = cmd->add_option("--status-addr", daemon.status_addr,
                                        "With --watch: serve the status pages (an overview, the "
                                        "Flux objects, their JSON under /api/) on this address, "
                                        "e.g. 127.0.0.1:9090; read-only (default: off)")
                            ->option_text("HOST:PORT");
  CLI::Option* status_auth =
      cmd->add_option("--status-auth", daemon.status_auth,
                      "With --status-addr: kubernetes: every request needs a bearer token the "
                      "API server accepts, of a user allowed to get fluxinstances in the "
                      "instance's namespace (else 401 or 403)")
          ->check(CLI::IsMember({"none", "kubernetes"}))
          ->option_text("none|kubernetes (default none)");
  CLI::Option* status_insecure = cmd->add_flag(
      "--status-insecure", daemon.status_insecure,
      "With --status-addr and no --status-auth: allow an address that is not a loopback one, "
      "so that anyone who reaches it reads the status pages");
  CLI::Option* log_format =
      cmd->add_option("--log-format", daemon.log_format, "With --watch: the log lines' format")
          ->check(CLI::IsMember({"text", "json"}))
          ->option_text("text|json (default text)");
  CLI::Option* leader_elect = cmd->add_flag(
      "--enable-leader-election", daemon.leader_elect,
      "With --watch: one replica at a time reconciles, holding the Lease flux-operator in "
      "--namespace (the operator's: a daemon and an operator never both do)");
  std::vector<CLI::Option*> election;
  for (auto [flag, value, what] :
       {std::tuple{"--leader-election-lease-duration", &daemon.lease_duration,
                   "how long standbys wait for a leader that stopped renewing"},
        std::tuple{"--leader-election-renew-deadline", &daemon.renew_deadline,
                   "how long the leader tries to renew before it gives up and stops"},
        std::tuple{"--leader-election-retry-period", &daemon.retry_period,
                   "how often the Lease is renewed, or tried for"}}) {
    election.push_back(
        cmd->add_option(flag, *value, std::string("With --enable-leader-election: ") + what)
            ->check(duration_check("5m"))
            ->option_text("DURATION (default " + *value + ")"));
  }
  cmd->callback([=] {
    const WatchFlags& daemon = options->daemon;
    options->wait_given = wait->count() > 0;
    if (!daemon.watch) {
      for (CLI::Option* needs_watch :
           {from_cluster, ns, metrics, health, status, status_auth, status_insecure, log_format,
            leader_elect, election[0], election[1], election[2]}) {
        if (needs_watch->count() > 0)
          throw CLI::ValidationError(needs_watch->get_name(), "only with --watch");
      }
      run_apply(*options);
      return;
    }
    if (options->writes.server_dry_run() || !options->writes.output.empty())
      throw CLI::ValidationError("--watch", "not with --dry-run or --output");
    if (options->cluster.contexts.size() > 1 || options->fleet.all_contexts)
      throw CLI::ValidationError("--watch", "on one context: a daemon runs in its cluster");
    bool has_file = !options->input.file.empty() || !options->input.filename.empty();
    if (daemon.from_cluster == has_file)
      throw CLI::ValidationError("--watch", "needs FILE or --from-cluster, not both");
    if (ns->count() > 0 && !daemon.from_cluster && !daemon.leader_elect)
      throw CLI::ValidationError("--namespace",
                                 "only with --from-cluster or --enable-leader-election");
    for (CLI::Option* option : election) {
      if (option->count() > 0 && !daemon.leader_elect)
        throw CLI::ValidationError(option->get_name(), "only with --enable-leader-election");
    }
    for (CLI::Option* option : {status_auth, status_insecure}) {
      if (option->count() > 0 && daemon.status_addr.empty())
        throw CLI::ValidationError(option->get_name(), "only with --status-addr");
    }
    // The pages show every Flux object's messages: a network hears them only
    // from users the API server vouches for, or when the user says so.
    bool authenticated = daemon.status_auth == "kubernetes";
    if (authenticated && daemon.status_insecure)
      throw CLI::ValidationError("--status-insecure", "not with --status-auth kubernetes");
    if (!daemon.status_addr.empty() && !authenticated && !daemon.status_insecure &&
        !daemon::loopback_address(daemon.status_addr))
      throw CLI::ValidationError("--status-addr",
                                 daemon.status_addr +
                                     ": not a loopback address, and anyone who reaches it reads "
                                     "the status pages (--status-auth kubernetes to ask for a "
                                     "token, or --status-insecure to serve it so)");
    run_watch(*options);
  });
}

}  // namespace fluxop::cli
