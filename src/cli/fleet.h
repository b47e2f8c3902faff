// A command on several clusters (issue 32): --context repeated or
// --all-contexts [--context-selector GLOB], --parallel N, --fail-fast; each
// cluster on its own thread with its own connection, its progress lines
// prefixed by its context, then a summary table.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "cli/cluster_flags.h"
#include "core/fleet/fleet.h"

namespace fluxop::cli {

struct FleetFlags {
  bool all_contexts = false;
  std::string selector;
  std::size_t parallel = 8;
  bool fail_fast = false;
  // apply's rollout order
  std::size_t batch_size = 0;
  bool stop_on_failure = false;
};

// --all-contexts, --context-selector, --parallel, --fail-fast.
void add_fleet_flags(CLI::App& command, FleetFlags& flags);

// The contexts to run on; empty when the command runs on one cluster as it
// always has (at most one --context, no --all-contexts).
std::vector<std::string> fleet_contexts(const ClusterFlags& cluster, const FleetFlags& flags);

// One cluster of the fleet: its context and its settings (the flags', for
// that context).
struct FleetMember {
  std::size_t index;  // in the contexts
  std::string context;
  kube::ClusterSettings settings;
};

// Runs `task` on each context as `flags` say, its notices prefixed by the
// context; an interrupt starts no more clusters.
std::vector<fleet::ClusterResult> run_fleet(
    const std::vector<std::string>& contexts, const ClusterFlags& cluster, const FleetFlags& flags,
    const std::function<fleet::ClusterResult(const FleetMember&)>& task);

// The summary table on stdout: CLUSTER, STATUS and the `columns` each row
// adds (`cells(i)` for the i-th context), then MESSAGE.
void print_fleet_summary(const std::vector<std::string>& contexts,
                         const std::vector<fleet::ClusterResult>& results,
                         const std::vector<std::string>& columns = {},
                         const std::function<std::vector<std::string>(std::size_t)>& cells = {});

// Ends the command with the fleet's exit code (fleet::exit_code) when it is
// not 0.
void exit_with(const std::vector<fleet::ClusterResult>& results, bool diff);

}  // namespace fluxop::cli
