#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/cluster_flags.h"
#include "cli/color.h"
#include "cli/commands.h"
#include "cli/fleet.h"
#include "cli/instance_input.h"
#include "cli/notice.h"
#include "cli/output.h"
#include "cli/table.h"
#include "core/error.h"
#include "core/plural.h"
#include "core/reconcile/preflight.h"
#include "core/reconcile/shared_render.h"

namespace fluxop::cli {

namespace {

struct CheckCommandOptions {
  InstanceInput input;
  ClusterFlags cluster;
  FleetFlags fleet;
  std::string output = "table";
  reconcile::PruneOptions prune;
};

// The document of -o json: README "check" documents it.
nlohmann::ordered_json check_document(const std::vector<reconcile::CheckResult>& checks,
                                      std::string_view outcome) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const reconcile::CheckResult& check : checks) {
    list.push_back({{"name", check.name},
                    {"status", reconcile::status_name(check.status)},
                    {"message", check.message}});
  }
  return {{"status", outcome}, {"checks", std::move(list)}};
}

struct CheckCounts {
  int failed = 0;
  int warnings = 0;
};

CheckCounts count(const std::vector<reconcile::CheckResult>& checks) {
  CheckCounts counts;
  for (const reconcile::CheckResult& check : checks) {
    counts.failed += check.status == reconcile::CheckStatus::failed;
    counts.warnings += check.status == reconcile::CheckStatus::warning;
  }
  return counts;
}

reconcile::CheckStatus outcome(const CheckCounts& counts) {
  return counts.failed > 0     ? reconcile::CheckStatus::failed
         : counts.warnings > 0 ? reconcile::CheckStatus::warning
                               : reconcile::CheckStatus::ok;
}

std::string counts_line(std::size_t checks, const CheckCounts& counts) {
  return count_of(checks, "check") + ": " + std::to_string(counts.failed) + " failed, " +
         count_of(counts.warnings, "warning");
}

// On several clusters: one table of every cluster's checks (a CLUSTER
// column first), the summary, or one document keyed by context.
void run_fleet_check(const CheckCommandOptions& options, const std::vector<std::string>& contexts) {
  instance::FluxInstance flux = load_input(options.input);
  reconcile::RegistryArtifacts artifacts = registry_artifacts(options.input.registry);
  reconcile::SharedRender render(artifacts, flux, render_request(options.input, /*revision=*/false),
                                 say_distribution);
  std::vector<std::vector<reconcile::CheckResult>> checks(contexts.size());
  std::vector<fleet::ClusterResult> results =
      run_fleet(contexts, options.cluster, options.fleet, [&](const FleetMember& member) {
        ConnectedCluster connected = kube::connect(member.settings, /*dry_run=*/true);
        kube::Cluster& cluster = *connected.cluster;
        std::vector<reconcile::CheckResult>& mine = checks[member.index] = reconcile::run_checks(
            cluster, flux,
            [&]() -> const RenderedInstance& {
              return render.get([&]() -> kube::Cluster& { return cluster; });
            },
            options.prune);
        CheckCounts counts = count(mine);
        return fleet::ClusterResult{counts.failed > 0 ? fleet::Outcome::failed : fleet::Outcome::ok,
                                    counts_line(mine.size(), counts)};
      });
  if (options.output == "json") {
    nlohmann::ordered_json document = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < contexts.size(); ++i) {
      document[contexts[i]] =
          checks[i].empty()
              ? nlohmann::ordered_json{{"status", fleet::outcome_name(results[i].outcome)},
                                       {"error", results[i].message}}
              : check_document(checks[i], reconcile::status_name(outcome(count(checks[i]))));
    }
    std::cout << render_document(document, OutputFormat::Json);
  } else {
    std::vector<std::vector<std::string>> rows = {{"CLUSTER", "STATUS", "CHECK", "MESSAGE"}};
    for (std::size_t i = 0; i < contexts.size(); ++i) {
      for (const reconcile::CheckResult& check : checks[i])
        rows.push_back({contexts[i], std::string(reconcile::status_name(check.status)), check.name,
                        check.message});
    }
    std::cout << render_table(rows) << "\n";
    print_fleet_summary(contexts, results);
  }
  exit_with(results, /*diff=*/false);
}

void run_check(const CheckCommandOptions& options) {
  if (std::vector<std::string> contexts = fleet_contexts(options.cluster, options.fleet);
      !contexts.empty()) {
    run_fleet_check(options, contexts);
    return;
  }
  instance::FluxInstance flux = load_input(options.input);
  reconcile::RegistryArtifacts artifacts = registry_artifacts(options.input.registry);
  // Nothing is written: the only POSTs are access reviews, which the
  // server keeps nowhere.
  ConnectedCluster connected = connect(options.cluster, /*dry_run=*/true);
  std::vector<reconcile::CheckResult> checks =
      reconcile::run_checks(*connected.cluster, artifacts, std::move(flux),
                            render_request(options.input, /*revision=*/false), options.prune);
  CheckCounts counts = count(checks);
  if (options.output == "json") {
    std::cout << render_document(check_document(checks, reconcile::status_name(outcome(counts))),
                                 OutputFormat::Json);
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const reconcile::CheckResult& check : checks)
      rows.push_back(
          {std::string(reconcile::status_name(check.status)), check.name, check.message});
    std::istringstream lines(render_table(rows));
    for (std::string line; std::getline(lines, line);) std::cout << color::check_line(line) << "\n";
  }
  print_notice(counts_line(checks.size(), counts) + " (" +
               count_of(connected.cluster->requests(), "API request") + ")");
  if (counts.failed > 0) throw ExitStatus{1};
}

}  // namespace

void add_check_command(CLI::App& app, yaml::ParseCache& parse_cache) {
  auto options = std::make_shared<CheckCommandOptions>();
  options->input.parse_cache = &parse_cache;
  auto* cmd = app.add_subcommand(
      "check",
      "Check a cluster before an apply, writing nothing: the Kubernetes version the Flux version "
      "supports, the caller's permissions, the storage class, the namespace, other FluxInstances "
      "and installations apply would take over, the distribution, a downgrade, what each prune "
      "would take, objects being deleted; exit 1 when a check fails");
  add_instance_flags(*cmd, options->input);
  options->input.mode = render::Mode::operator_controller;
  add_cluster_flags(*cmd, options->cluster, /*writes=*/false);
  add_fleet_flags(*cmd, options->fleet);
  add_prune_crds_flag(*cmd, options->prune.prune_crds);
  cmd->add_option("-o,--output", options->output,
                  "table: one line per check; json: the checks as a document")
      ->check(CLI::IsMember({"table", "json"}))
      ->option_text("table|json (default table)");
  cmd->callback([options] { run_check(*options); });
}

}  // namespace fluxop::cli
