#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/cluster_flags.h"
#include "cli/color.h"
#include "cli/commands.h"
#include "cli/instance_input.h"
#include "cli/notice.h"
#include "cli/output.h"
#include "cli/table.h"
#include "core/reconcile/preflight.h"

namespace fluxop::cli {

namespace {

struct CheckCommandOptions {
  InstanceInput input;
  ClusterFlags cluster;
  std::string output = "table";
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

void run_check(const CheckCommandOptions& options) {
  instance::FluxInstance flux = load_input(options.input);
  reconcile::RegistryArtifacts artifacts = registry_artifacts(options.input.registry);
  // Nothing is written: the only POSTs are access reviews, which the
  // server keeps nowhere.
  ConnectedCluster connected = connect(options.cluster, /*dry_run=*/true);
  std::vector<reconcile::CheckResult> checks =
      reconcile::run_checks(*connected.cluster, artifacts, std::move(flux),
                            render_request(options.input, /*revision=*/false));
  int failed = 0;
  int warnings = 0;
  for (const reconcile::CheckResult& check : checks) {
    failed += check.status == reconcile::CheckStatus::failed;
    warnings += check.status == reconcile::CheckStatus::warning;
  }
  reconcile::CheckStatus outcome = failed > 0     ? reconcile::CheckStatus::failed
                                   : warnings > 0 ? reconcile::CheckStatus::warning
                                                  : reconcile::CheckStatus::ok;
  if (options.output == "json") {
    std::cout << render_document(check_document(checks, reconcile::status_name(outcome)),
                                 OutputFormat::Json);
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const reconcile::CheckResult& check : checks)
      rows.push_back(
          {std::string(reconcile::status_name(check.status)), check.name, check.message});
    std::istringstream lines(render_table(rows));
    for (std::string line; std::getline(lines, line);) std::cout << color::check_line(line) << "\n";
  }
  print_notice(std::to_string(checks.size()) + " checks: " + std::to_string(failed) + " failed, " +
               std::to_string(warnings) + " warnings (" +
               std::to_string(connected.cluster->requests()) + " API requests)");
  if (failed > 0) throw ExitStatus{1};
}

}  // namespace

void add_check_command(CLI::App& app, yaml::ParseCache& parse_cache) {
  auto options = std::make_shared<CheckCommandOptions>();
  options->input.parse_cache = &parse_cache;
  auto* cmd = app.add_subcommand(
      "check",
      "Check a cluster before an apply, writing nothing: the Kubernetes version the Flux version "
      "supports, the caller's permissions, the storage class, the namespace, other FluxInstances "
      "and installations apply would take over, the distribution; exit 1 when a check fails");
  add_instance_flags(*cmd, options->input);
  options->input.mode = render::Mode::operator_controller;
  add_cluster_flags(*cmd, options->cluster, /*writes=*/false);
  cmd->add_option("-o,--output", options->output,
                  "table: one line per check; json: the checks as a document")
      ->check(CLI::IsMember({"table", "json"}))
      ->option_text("table|json (default table)");
  cmd->callback([options] { run_check(*options); });
}

}  // namespace fluxop::cli
