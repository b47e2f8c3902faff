#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>

#include "cli/change_output.h"
#include "cli/cluster_flags.h"
#include "cli/commands.h"
#include "cli/duration_check.h"
#include "cli/instance_target.h"
#include "cli/interrupt.h"
#include "cli/notice.h"
#include "core/error.h"
#include "core/plural.h"
#include "core/reconcile/uninstall.h"

namespace fluxop::cli {

namespace {

struct DeleteCommandOptions {
  InstanceTarget target;
  ClusterFlags cluster;
  bool keep_crds = false;
  bool wait = true;
  bool yes = false;
  std::string timeout = "5m";
  ChangeSetFlags writes;
};

// The uninstall goes on once the user said so: asked on a terminal (stdin
// and stderr), --yes without one. A server dry run deletes nothing and
// asks nothing.
std::function<bool(const std::string&)> confirmation(const DeleteCommandOptions& options,
                                                     const ConnectedCluster& connected) {
  if (options.yes || options.writes.server_dry_run()) return nullptr;
  const kube::ClusterAccess& access = connected.client->access();
  std::string where = access.context.empty()
                          ? "the cluster " + access.server + " (in-cluster)"
                          : "context " + quote(access.context) + " (" + access.server + ")";
  return [where](const std::string& removes) {
    if (isatty(STDIN_FILENO) == 0 || isatty(STDERR_FILENO) == 0)
      throw CommandError("--yes: delete removes, on " + where + ", " + removes +
                             "; without a terminal to ask on, --yes says to go on",
                         kExitUsage);
    std::cerr << printable("On " + where + ", delete removes " + removes + ".") << "\n"
              << "Proceed? [y/N] " << std::flush;
    std::string answer;
    if (!std::getline(std::cin, answer)) return false;
    return answer == "y" || answer == "Y" || answer == "yes";
  };
}

void run_delete(const DeleteCommandOptions& options) {
  kube::ObjectKey ref = target_key(options.target);
  reconcile::UninstallOptions uninstall;
  uninstall.keep_crds = options.keep_crds;
  uninstall.wait = options.wait;
  uninstall.timeout = duration_flag(options.timeout);
  uninstall.lock_timeout = duration_flag(options.writes.lock_timeout);
  ConnectedCluster connected =
      connect(options.cluster, options.writes.server_dry_run(),
              std::chrono::steady_clock::now() + uninstall.timeout, interrupted);
  catch_interrupts();
  uninstall.interruption = interruption;
  uninstall.on_progress = print_notice;
  uninstall.wait_status = stderr_wait_status();
  uninstall.confirm = confirmation(options, connected);
  ChangeSetOutput output(options.writes, /*verbose=*/false);
  uninstall.on_change = output.on_change();
  output.run([&] {
    run_interruptible([&] {
      reconcile::UninstallResult result =
          reconcile::uninstall_instance(*connected.cluster, ref, uninstall);
      if (connected.cluster->dry_run()) result.message = dry_run_summary(result.changes);
      print_notice(result.message + " (" + count_of(connected.cluster->requests(), "API request") +
                   ")");
      output.document()["message"] = result.message;
    });
  });
}

}  // namespace

void add_delete_command(CLI::App& app) {
  auto options = std::make_shared<DeleteCommandOptions>();
  auto* cmd = app.add_subcommand(
      "delete",
      "Uninstall Flux as the operator does when its FluxInstance is deleted: the controllers, "
      "the Flux custom resources' finalizers, the inventory (CRDs included), the instance; the "
      "namespace and what Flux deployed stay. Names the context and what it removes, and asks "
      "(--yes without a terminal)");
  add_instance_target(*cmd, options->target);
  add_cluster_flags(*cmd, options->cluster);
  add_upstream_spelling(*cmd, UpstreamName::required);
  add_operator_kind_refusals(*cmd);
  cmd->add_flag_function("--with-suspend",
                         [](std::int64_t) {
                           throw CLI::ValidationError(
                               "--with-suspend",
                               "the upstream CLI's, not fluxopctl's: delete is the uninstall; "
                               "to leave Flux running, suspend the instance and `kubectl "
                               "delete fluxinstance` it");
                         })
      ->group("");
  cmd->add_flag("--keep-crds", options->keep_crds,
                "Keep the CRDs and the Flux custom resources, so that a reinstall resumes where "
                "it stopped");
  cmd->add_flag("-y,--yes,--silent", options->yes,
                "Go on without asking (needed without a terminal); --silent is the flux CLI's "
                "spelling");
  cmd->add_flag("--wait,!--no-wait", options->wait,
                "Wait for what is deleted to be gone (default true; the controllers are always "
                "waited for)");
  cmd->add_option("--timeout", options->timeout, "How long the uninstall may take")
      ->check(duration_check("5m"))
      ->option_text("DURATION (default 5m)");
  add_change_set_flags(*cmd, options->writes);
  cmd->callback([options] { run_delete(*options); });
}

}  // namespace fluxop::cli
