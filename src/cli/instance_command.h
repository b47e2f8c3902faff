// What the commands on the live FluxInstance share (get, wait, reconcile,
// suspend, resume, export resource): their options, their registration with
// the upstream CLI's spellings, the instance read from the cluster.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cluster_flags.h"
#include "cli/fleet.h"
#include "cli/instance_target.h"
#include "cli/output.h"
#include "core/kube/cluster.h"

namespace fluxop::cli {

struct InstanceCommandOptions {
  InstanceTarget target;
  ClusterFlags cluster;
  FleetFlags fleet;
  std::string output = "table";  // get
  bool all_namespaces = false;   // get: every FluxInstance, as a list
  CLI::App* all = nullptr;       // get all: the Flux resources
  std::vector<std::string> kinds;
  std::string ready_status;
  CLI::App* upstream = nullptr;  // `COMMAND instance`
  std::string timeout = "5m";    // wait, reconcile, resume
  bool wait = true;              // reconcile, resume
  bool force = false;            // reconcile
  std::string dry_run = "none";  // reconcile, suspend, resume
  bool dry() const { return dry_run != "none"; }
};

// The command NAME with the instance's target, the cluster flags (and the
// write flags when it `writes`), the fleet flags but for reconcile, and the
// upstream CLI's spellings and refusals.
CLI::App* add_instance_command(CLI::App& app, const std::string& name,
                               const std::string& description,
                               std::shared_ptr<InstanceCommandOptions> options, bool writes);

// --timeout DURATION (default 5m).
void add_timeout_flag(CLI::App& cmd, InstanceCommandOptions& options);

// The live instance; throws fluxop::Error naming it when it does not exist.
nlohmann::json live_instance(kube::Cluster& cluster, const kube::ObjectKey& ref);

// -o yaml or json, as a document's format.
OutputFormat document_format(const InstanceCommandOptions& options);

}  // namespace fluxop::cli
