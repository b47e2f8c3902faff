// `fluxopctl apply --watch`: the daemon's parts put together. The loop
// (daemon.h) decides when; this says how: the reconcile pipeline a one-shot
// apply runs, events on the instance, the artifact's digest, the report, the
// leader election, the endpoints and the log.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

#include "core/daemon/log.h"
#include "core/instance/instance.h"
#include "core/kube/kube_cluster.h"
#include "core/reconcile/apply.h"
#include "core/reconcile/artifacts.h"
#include "core/reconcile/pipeline.h"

namespace fluxop::daemon {

struct WatchOptions {
  kube::ClusterSettings cluster;
  reconcile::RegistrySettings registry;
  std::string artifact_cache;  // the OCI artifact cache's root; empty: none
  // The instance's file; empty: the FluxInstance `flux` in `ns`, watched.
  std::string file;
  instance::LoadOptions load;
  std::string ns = "flux-system";
  reconcile::RenderRequest render;  // its notice is the daemon's log
  reconcile::ApplyOptions apply;    // its callbacks are the daemon's
  std::string metrics_addr;         // empty: no /metrics
  std::string health_addr;          // empty: no /healthz, /readyz
  std::string status_addr;          // empty: no status pages
  bool status_auth = false;         // --status-auth kubernetes (status_access.h)
  LogFormat log_format = LogFormat::text;
  bool leader_elect = false;  // the Lease flux-operator in `ns`
  std::chrono::milliseconds lease_duration{35'000};
  std::chrono::milliseconds renew_deadline{30'000};
  std::chrono::milliseconds retry_period{5'000};
};

// The reconcile loop, logging to `log`, until SIGTERM or SIGINT; throws
// fluxop::Error when the leader Lease was lost.
void run_watch(const WatchOptions& options, std::ostream& log);

}  // namespace fluxop::daemon
