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
#include "cli/instance_input.h"
#include "cli/interrupt.h"
#include "cli/notice.h"
#include "core/daemon/watch.h"
#include "core/duration.h"
#include "core/reconcile/events.h"
#include "core/reconcile/pipeline.h"

namespace fluxop::cli {

namespace {

struct WatchFlags {
  bool watch = false;
  bool from_cluster = false;
  std::string ns = "flux-system";
  std::string metrics_addr;
  std::string health_addr;
  std::string log_format = "text";
  bool leader_elect = false;
  std::string lease_duration = "35s";
  std::string renew_deadline = "30s";
  std::string retry_period = "5s";
};

struct ApplyCommandOptions {
  InstanceInput input;
  ClusterFlags cluster;
  WatchFlags daemon;
  bool wait = true;
  bool wait_given = false;  // else .spec.wait decides
  std::string timeout;
  ChangeSetFlags writes;
  bool verbose = false;
  bool force = false;
};

// What every apply sets from the flags, once or in the loop.
reconcile::ApplyOptions apply_options(const ApplyCommandOptions& options) {
  reconcile::ApplyOptions apply;
  if (options.wait_given) apply.wait = options.wait;
  if (!options.timeout.empty()) apply.timeout = duration_flag(options.timeout);
  apply.lock_timeout = duration_flag(options.writes.lock_timeout);
  apply.force = options.force;
  return apply;
}

void run_apply(const ApplyCommandOptions& options) {
  reconcile::ApplyOptions apply = apply_options(options);
  apply.preflight = true;
  instance::FluxInstance flux = load_input(options.input);
  // An API server that restarts mid-apply is waited for, until the apply's
  // deadline: what is applied so far must not be left half-done for a blip.
  // (The policy warns about a bad annotation; it is not said twice.)
  ConnectedCluster connected = connect(
      options.cluster, options.writes.server_dry_run(),
      std::chrono::steady_clock::now() + reconcile::apply_timeout(flux, apply.timeout, nullptr),
      interrupted);
  catch_interrupts();

  ChangeSetOutput output(options.writes, options.verbose);
  apply.interruption = interruption;
  apply.on_progress = print_notice;
  apply.on_change = output.on_change();
  // The daemon's events, so that the instance tells the same story whichever
  // applied it last. A caller who may not create Events still applies: one
  // warning says they are missing.
  bool warned = false;
  reconcile::EventRecorder events(*connected.cluster, [&warned](const std::string& error) {
    if (!std::exchange(warned, true)) print_warning("events not recorded: " + error);
  });
  kube::ObjectKey ref = reconcile::instance_ref(flux.ns, flux.name);
  apply.on_event = [&](const reconcile::InstanceEvent& event) { events.record(ref, "", event); };
  output.run([&] {
    run_interruptible([&] {
      std::optional<std::string> outdated;
      reconcile::RegistryArtifacts artifacts = registry_artifacts(options.input.registry);
      reconcile::ApplyResult result =
          reconcile::reconcile_instance(*connected.cluster, artifacts, std::move(flux),
                                        render_request(options.input, /*revision=*/true), apply,
                                        [&](const RenderedInstance& instance) {
                                          say_distribution(instance);
                                          outdated = reconcile::outdated_version(instance);
                                          output.document()["revision"] =
                                              instance.rendered.revision;
                                        })
              .result;
      // Once the instance and its namespace are there to hold it.
      if (outdated && !connected.cluster->dry_run())
        apply.on_event({false, "OutdatedVersion", *outdated, ""});
      print_notice(result.message + " (" + std::to_string(connected.cluster->requests()) +
                   " API requests)");
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
  watch.render = render_request(options.input, /*revision=*/true);
  watch.apply = apply_options(options);
  watch.metrics_addr = flags.metrics_addr;
  watch.health_addr = flags.health_addr;
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
  options->input.mode = render::Mode::operator_controller;
  add_cluster_flags(*cmd, options->cluster);
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
                "Apply an instance whose reconciliation is disabled (fluxopctl suspend, the "
                "fluxcd.controlplane.io/reconcile: disabled annotation)");
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
      for (CLI::Option* needs_watch : {from_cluster, ns, metrics, health, log_format, leader_elect,
                                       election[0], election[1], election[2]}) {
        if (needs_watch->count() > 0)
          throw CLI::ValidationError(needs_watch->get_name(), "only with --watch");
      }
      run_apply(*options);
      return;
    }
    if (options->writes.server_dry_run() || !options->writes.output.empty())
      throw CLI::ValidationError("--watch", "not with --dry-run or --output");
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
    run_watch(*options);
  });
}

}  // namespace fluxop::cli
