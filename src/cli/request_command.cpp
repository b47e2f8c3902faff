// The requests to the FluxInstance, as the upstream CLI makes them: wait
// (until Ready), reconcile, suspend and resume (its annotations, which the
// operator and `apply --watch` honour, reconcile::request_annotations).
#include <chrono>
#include <functional>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/duration_check.h"
#include "cli/instance_command.h"
#include "cli/interrupt.h"
#include "cli/notice.h"
#include "core/error.h"
#include "core/reconcile/instance_requests.h"

namespace fluxop::cli {

namespace {

using reconcile::InstanceRequest;

// Waits for the answer to the request at `requested_at` ("" for none);
// returns the instance's Ready message.
std::string wait_for(const InstanceCommandOptions& options, kube::Cluster& cluster,
                     const kube::ObjectKey& ref, const std::string& requested_at) {
  catch_interrupts();
  print_notice("waiting for " + display_name(ref) +
               (requested_at.empty() ? " to be ready" : " to be reconciled"));
  std::string ready;
  run_interruptible([&] {
    ready = reconcile::wait_ready(cluster, ref, requested_at,
                                  std::chrono::steady_clock::now() + duration_flag(options.timeout),
                                  interruption, stderr_wait_status());
  });
  return ready;
}

// The annotations, then the wait when asked; returns the last line to say.
std::string request(const InstanceCommandOptions& options, kube::Cluster& cluster,
                    InstanceRequest asked) {
  kube::ObjectKey ref = target_key(options.target);
  std::string now = reconcile::request_time(std::chrono::system_clock::now());
  reconcile::annotate_instance(cluster, ref,
                               reconcile::request_annotations(asked, now, options.force));
  std::string done(reconcile::request_done(asked));
  // The annotations went as a server dry run: nothing to wait for.
  if (options.dry())
    return display_name(ref) + ": reconciliation would be " + done +
           " (server dry run; nothing was written)";
  std::string said = display_name(ref) + ": reconciliation " + done;
  if (!reconcile::request_answered(asked)) return said;
  said += " at " + now;
  // Without the operator or a daemon (the CI model), the request waits for
  // whatever starts next: said at once rather than after the timeout.
  std::string nothing = reconcile::nothing_reconciles(cluster, ref);
  if (!options.wait) {
    if (!nothing.empty()) print_notice("warning: " + nothing);
    return said;
  }
  print_notice(said);
  if (!nothing.empty()) throw Error(nothing);
  return wait_for(options, cluster, ref, now);
}

// On several clusters: what `act` says of each, prefixed by its context,
// then the summary.
void run_fleet_request(const InstanceCommandOptions& options,
                       const std::vector<std::string>& contexts,
                       const std::function<std::string(kube::Cluster&)>& act) {
  std::vector<fleet::ClusterResult> results =
      run_fleet(contexts, options.cluster, options.fleet, [&](const FleetMember& member) {
        ConnectedCluster connected = kube::connect(member.settings, options.dry());
        std::string said = act(*connected.cluster);
        print_notice(said);
        return fleet::ClusterResult{fleet::Outcome::ok, said};
      });
  print_fleet_summary(contexts, results);
  exit_with(results, /*diff=*/false);
}

void run_wait(const InstanceCommandOptions& options) {
  auto wait = [&](kube::Cluster& cluster) {
    return wait_for(options, cluster, target_key(options.target), "");
  };
  if (std::vector<std::string> contexts = fleet_contexts(options.cluster, options.fleet);
      !contexts.empty()) {
    run_fleet_request(options, contexts, wait);
    return;
  }
  ConnectedCluster connected = connect(options.cluster, /*dry_run=*/false);
  print_notice(wait(*connected.cluster));
}

void run_request(const InstanceCommandOptions& options, InstanceRequest asked) {
  auto act = [&](kube::Cluster& cluster) { return request(options, cluster, asked); };
  if (asked != InstanceRequest::reconcile) {
    if (std::vector<std::string> contexts = fleet_contexts(options.cluster, options.fleet);
        !contexts.empty()) {
      run_fleet_request(options, contexts, act);
      return;
    }
  }
  ConnectedCluster connected = connect(options.cluster, options.dry());
  print_notice(act(*connected.cluster));
}

void add_wait_flag(CLI::App& cmd, InstanceCommandOptions& options) {
  cmd.add_flag("--wait,!--no-wait", options.wait,
               "Wait for the reconciliation to finish and the instance to be ready (default "
               "true)");
  add_timeout_flag(cmd, options);
}

}  // namespace

void add_request_commands(CLI::App& app) {
  auto wait = std::make_shared<InstanceCommandOptions>();
  CLI::App* cmd = add_instance_command(
      app, "wait",
      "Wait until the FluxInstance is ready; a failure, its suspension or the timeout is an "
      "error naming what is not ready",
      wait, /*writes=*/false);
  add_timeout_flag(*cmd, *wait);
  cmd->callback([wait] { run_wait(*wait); });

  auto reconcile = std::make_shared<InstanceCommandOptions>();
  cmd = add_instance_command(app, "reconcile",
                             "Request a reconciliation of the FluxInstance (" +
                                 std::string(reconcile::kRequestedAtAnnotation) +
                                 "), as `flux-operator reconcile instance` does, and wait for it",
                             reconcile, /*writes=*/true);
  cmd->add_flag("--force", reconcile->force,
                "Also migrate every Flux custom resource to its latest API version (" +
                    std::string(reconcile::kForceAtAnnotation) + ")");
  add_wait_flag(*cmd, *reconcile);
  cmd->callback([reconcile] { run_request(*reconcile, InstanceRequest::reconcile); });

  auto suspend = std::make_shared<InstanceCommandOptions>();
  cmd = add_instance_command(
      app, "suspend",
      "Suspend the FluxInstance's reconciliation (" + std::string(reconcile::kReconcileAnnotation) +
          ": disabled): the operator and the daemon pause, a one-shot apply refuses it unless "
          "forced",
      suspend, /*writes=*/true);
  cmd->callback([suspend] { run_request(*suspend, InstanceRequest::suspend); });

  auto resume = std::make_shared<InstanceCommandOptions>();
  cmd = add_instance_command(app, "resume",
                             "Resume the FluxInstance's reconciliation (" +
                                 std::string(reconcile::kReconcileAnnotation) +
                                 ": enabled, and a reconcile requested), and wait for it",
                             resume, /*writes=*/true);
  add_wait_flag(*cmd, *resume);
  cmd->callback([resume] { run_request(*resume, InstanceRequest::resume); });
}

}  // namespace fluxop::cli
