// `fluxopctl apply`, once (CI) or as a daemon (`--watch`): its flags, and
// the one reconciliation both run.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <string>

#include "cli/change_output.h"
#include "cli/cluster_flags.h"
#include "cli/duration_check.h"
#include "cli/instance_input.h"
#include "core/reconcile/apply.h"

namespace fluxop::cli {

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

struct ReconcileRun {
  RenderedInstance instance;
  reconcile::ApplyResult result;
};

// Reads the distribution's pull secret, renders the instance as the operator
// does, and applies it with `apply` (the render's revision and artifact
// digest filled in). `rendered` hears of the render before anything is
// written. Failures before the apply throw reconcile::ReconcileError with the
// operator's reason: ArtifactFailed (the secret, the pull), BuildFailed.
ReconcileRun reconcile_input(ConnectedCluster& connected, const InstanceInput& input,
                             instance::FluxInstance flux, reconcile::ApplyOptions apply,
                             const std::function<void(const RenderedInstance&)>& rendered);

// `apply --watch`: the reconcile loop, until SIGTERM or SIGINT.
void run_watch(const ApplyCommandOptions& options, const reconcile::ApplyOptions& apply);

}  // namespace fluxop::cli
