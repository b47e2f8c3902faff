// The flags of the commands that talk to a cluster, as kubectl has them, and
// the connection they describe. kubectl's global flags (--kubeconfig,
// --context, -n, --as, --as-group, --request-timeout, --color) are defined
// once, on the app, and taken before or after any command; a command that
// does not reach a cluster accepts and ignores them, as kubectl does.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/request_timeout_flag.h"
#include "core/kube/kube_cluster.h"

namespace fluxop::cli {

// The connection's settings, and every --context given: get, check, diff,
// apply, wait, report, suspend and resume run on each (cli/fleet.h).
struct ClusterFlags : kube::ClusterSettings {
  std::vector<std::string> contexts;
};

// The global flags that name the cluster and the caller: --kubeconfig,
// --context, -n/--namespace, --as, --as-group (and --request-timeout). On the
// app, before any command is added.
void add_global_cluster_flags(CLI::App& app);

// Makes the global flags set `flags` when `command` runs; adds
// --insecure-skip-tls-verify, and for a command that `writes`,
// --field-manager (its default: flags.field_manager's value).
void add_cluster_flags(CLI::App& command, ClusterFlags& flags, bool writes = true);

// The app's (the root's) option `name`, which every command falls through to.
CLI::Option& global_option(CLI::App& command, const std::string& name);

using ConnectedCluster = kube::Connection;

// kube::connect, for a command on one cluster: several --context are
// refused, naming the commands that take them.
ConnectedCluster connect(const ClusterFlags& flags, bool dry_run,
                         std::optional<std::chrono::steady_clock::time_point> retry_until = {},
                         std::function<bool()> cancelled = {});

}  // namespace fluxop::cli
