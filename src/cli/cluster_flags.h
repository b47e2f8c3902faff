// The flags of the commands that talk to a cluster (apply, diff), as kubectl
// has them, and the connection they describe.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/request_timeout_flag.h"
#include "core/kube/kube_cluster.h"

namespace fluxop::cli {

using ClusterFlags = kube::ClusterSettings;

// --kubeconfig, --context, --insecure-skip-tls-verify, --request-timeout, and for a command
// that `writes`, --field-manager (its default: flags.field_manager's value).
void add_cluster_flags(CLI::App& command, ClusterFlags& flags, bool writes = true);

using ConnectedCluster = kube::Connection;
using kube::connect;

}  // namespace fluxop::cli
