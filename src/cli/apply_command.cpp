#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <memory>

#include "cli/cluster_flags.h"
#include "cli/commands.h"
#include "cli/instance_input.h"
#include "core/distribution/crd_versions.h"
#include "core/error.h"
#include "core/instance/duration.h"
#include "core/reconcile/apply.h"
#include "core/reconcile/pull_secret.h"
#include "core/yaml/json.h"

namespace fluxop::cli {

namespace {

std::atomic<int> stop_signal{0};

extern "C" void on_stop_signal(int signal) { stop_signal = signal; }

struct ApplyCommandOptions {
  InstanceInput input;
  ClusterFlags cluster;
  bool wait = true;
  bool wait_given = false;  // else .spec.wait decides
  std::string timeout;
  std::string lock_timeout = "1m";
  std::string dry_run = "none";
  std::string output;
  bool verbose = false;
};

// Checked by the Duration validator at parse time: a bad value is a usage
// error (exit 2) before anything is read or connected to.
std::chrono::seconds duration_flag(const std::string& value) {
  return std::chrono::duration_cast<std::chrono::seconds>(*instance::parse_go_duration(value));
}

const CLI::Validator kDuration(
    [](const std::string& value) -> std::string {
      std::optional<std::chrono::nanoseconds> duration = instance::parse_go_duration(value);
      if (duration && duration->count() >= 0) return "";
      return "'" + value + "' is not a duration such as 5m or 90s";
    },
    "DURATION");

void run_apply(const ApplyCommandOptions& options) {
  std::optional<std::chrono::seconds> timeout;
  if (!options.timeout.empty()) timeout = duration_flag(options.timeout);
  std::chrono::seconds lock_timeout = duration_flag(options.lock_timeout);
  instance::FluxInstance flux = load_input(options.input);
  // An API server that restarts mid-apply is waited for, until the apply's
  // deadline: what is applied so far must not be left half-done for a blip.
  // (The policy warns about a bad annotation; it is not said twice.)
  ConnectedCluster connected =
      connect(options.cluster, options.dry_run == "server",
              std::chrono::steady_clock::now() + reconcile::apply_timeout(flux, timeout, nullptr));
  // Everything that can fail without writing to the cluster fails before it
  // is written to; the pull secret is only read.
  InstanceInput input = options.input;
  if (!flux.distribution.artifact_pull_secret.empty()) {
    input.registry.credentials = reconcile::secret_credentials(
        *connected.client, flux.ns, flux.distribution.artifact_pull_secret);
  }
  RenderedInstance instance = render_loaded(input, std::move(flux), /*revision=*/true);
  say_distribution(instance);

  signal(SIGINT, on_stop_signal);
  signal(SIGTERM, on_stop_signal);

  bool json_output = options.output == "json";
  bool dry_run = options.dry_run == "server";
  std::string suffix = dry_run ? " (server dry run)" : "";
  std::vector<ssa::Change> changes;
  reconcile::ApplyOptions apply;
  apply.artifact_revision = instance.artifact_digest;
  if (options.wait_given) apply.wait = options.wait;
  apply.timeout = timeout;
  apply.lock_timeout = lock_timeout;
  apply.interrupted = [] { return stop_signal != 0; };
  apply.intermediate_version = [&instance](const std::string& crd,
                                           const std::vector<std::string>& api_versions) {
    std::optional<distribution::Version> target =
        distribution::parse_version(instance.rendered.version);
    std::optional<distribution::Version> through =
        target ? distribution::newest_serving(instance.distribution, *target, crd, api_versions)
               : std::nullopt;
    return through ? "v" + distribution::to_string(*through) : std::string();
  };
  apply.on_progress = [](const std::string& line) { std::cerr << line << "\n"; };
  apply.on_change = [&](const ssa::Change& change) {
    changes.push_back(change);
    if (json_output) return;
    if (change.action == ssa::Action::Unchanged && !options.verbose) return;
    std::cout << ssa::change_line(change) << suffix << "\n" << std::flush;
  };
  // With -o json, a failed apply prints the changes it made too, beside its
  // error: they happened, and are recorded nowhere else.
  nlohmann::json document = {
      {"revision", instance.rendered.revision}, {"dryRun", dry_run}, {"changes", nullptr}};
  try {
    reconcile::ApplyResult result =
        reconcile::apply_instance(*connected.cluster, instance.flux, instance.rendered, apply);
    std::cerr << result.message << " (" << connected.cluster->requests() << " API requests)\n";
    document["message"] = result.message;
  } catch (const Error& error) {
    if (!json_output) throw;
    document["error"] = error.what();
    document["changes"] = ssa::change_set_json(changes);
    std::cout << document.dump(4) << "\n";
    throw;
  }
  if (json_output) {
    document["changes"] = ssa::change_set_json(changes);
    std::cout << document.dump(4) << "\n";
  }
}

}  // namespace

void add_apply_command(CLI::App& app) {
  auto options = std::make_shared<ApplyCommandOptions>();
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
      ->check(kDuration)
      ->option_text("DURATION");
  cmd->add_option("--lock-timeout", options->lock_timeout,
                  "How long to wait for another apply of the instance to finish")
      ->check(kDuration)
      ->option_text("DURATION (default 1m)");
  cmd->add_option("--dry-run", options->dry_run,
                  "server: send every write as an API server dry run; nothing changes")
      ->check(CLI::IsMember({"none", "server"}))
      ->option_text("none|server");
  cmd->add_option("-o,--output", options->output, "json: the change set as a JSON document")
      ->check(CLI::IsMember({"json"}))
      ->option_text("json");
  cmd->add_flag("-v,--verbose", options->verbose, "Also list unchanged objects");
  cmd->callback([options, wait] {
    options->wait_given = wait->count() > 0;
    run_apply(*options);
  });
}

}  // namespace fluxop::cli
