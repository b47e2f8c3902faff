// The flags of the commands that talk to a cluster (apply, diff), as kubectl
// has them, and the connection they describe.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "cli/request_timeout_flag.h"
#include "core/kube/client.h"
#include "core/ssa/kube_cluster.h"

namespace fluxop::cli {

struct ClusterFlags {
  std::string kubeconfig;
  std::string context;
  bool insecure_skip_tls_verify = false;
  std::chrono::milliseconds request_timeout = kDefaultRequestTimeout;
  std::string field_manager = "flux-operator";  // the in-cluster operator's
};

// --kubeconfig, --context, --insecure-skip-tls-verify, --request-timeout, and for a command
// that `writes`, --field-manager (its default: flags.field_manager's value).
void add_cluster_flags(CLI::App& command, ClusterFlags& flags, bool writes = true);

struct ConnectedCluster {
  std::unique_ptr<kube::KubeClient> client;
  std::unique_ptr<ssa::KubeCluster> cluster;
};

// `retry_until`: until when an outage of a server that has answered is
// retried (kube::ClientOptions::retry_until); `cancelled` ends a request
// early (kube::ClientOptions::cancelled).
ConnectedCluster connect(const ClusterFlags& flags, bool dry_run,
                         std::optional<std::chrono::steady_clock::time_point> retry_until = {},
                         std::function<bool()> cancelled = {});

}  // namespace fluxop::cli
