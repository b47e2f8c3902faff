#include <iostream>
#include <memory>
#include <optional>

#include "cli/cluster_flags.h"
#include "cli/color.h"
#include "cli/commands.h"
#include "cli/fleet.h"
#include "cli/instance_input.h"
#include "core/error.h"
#include "core/plural.h"
#include "core/reconcile/pipeline.h"
#include "core/reconcile/shared_render.h"
#include "core/yaml/json.h"

namespace fluxop::cli {

namespace {

struct DiffCommandOptions {
  InstanceInput input;
  ClusterFlags cluster;
  FleetFlags fleet;
  std::string output;  // "json", or empty for the unified diffs
  bool summary = false;
  reconcile::PruneOptions prune;
};

// kubectl diff's exit codes: 0 no differences, 1 differences, 2 or more errors.
constexpr int kDiffError = 2;

// On several clusters: each one's diff in a block headed by its context,
// in the contexts' order once all are done (not interleaved), then the
// summary; with -o json one document keyed by context.
void run_fleet_diff(const DiffCommandOptions& options, const std::vector<std::string>& contexts) {
  reconcile::RegistryArtifacts artifacts = registry_artifacts(options.input.registry);
  reconcile::SharedRender render(artifacts, load_input(options.input),
                                 render_request(options.input, /*revision=*/false),
                                 say_distribution);
  std::vector<reconcile::InstanceDiff> diffs(contexts.size());
  std::vector<fleet::ClusterResult> results =
      run_fleet(contexts, options.cluster, options.fleet, [&](const FleetMember& member) {
        std::optional<ConnectedCluster> connected;
        auto cluster = [&]() -> kube::Cluster& {
          if (!connected) connected = kube::connect(member.settings, /*dry_run=*/true);
          return *connected->cluster;
        };
        const RenderedInstance& instance = render.get(cluster);
        reconcile::InstanceDiff& diff = diffs[member.index] =
            reconcile::diff_instance(cluster(), instance.flux, instance.rendered, options.prune);
        return fleet::ClusterResult{diff.changed > 0 ? fleet::Outcome::changed : fleet::Outcome::ok,
                                    count_of(diff.changed, "object") + " would change"};
      });
  if (options.output == "json") {
    nlohmann::json document = nlohmann::json::object();
    for (std::size_t i = 0; i < contexts.size(); ++i) {
      const fleet::ClusterResult& result = results[i];
      bool done = result.outcome == fleet::Outcome::ok || result.outcome == fleet::Outcome::changed;
      document[contexts[i]] = done ? reconcile::diff_json(diffs[i])
                                   : nlohmann::json{{"status", fleet::outcome_name(result.outcome)},
                                                    {"error", result.message}};
    }
    std::cout << printable_json(document.dump(4)) << "\n";
  } else {
    for (std::size_t i = 0; i < contexts.size(); ++i) {
      if (results[i].outcome != fleet::Outcome::changed) continue;
      std::cout << "# " << printable(contexts[i]) << "\n" << reconcile::diff_summary(diffs[i]);
      if (!options.summary) std::cout << "\n" << color::diff(diffs[i].text);
    }
    print_fleet_summary(contexts, results);
  }
  exit_with(results, /*diff=*/true);
}

void run_diff(const DiffCommandOptions& options) {
  try {
    if (std::vector<std::string> contexts = fleet_contexts(options.cluster, options.fleet);
        !contexts.empty()) {
      run_fleet_diff(options, contexts);
      return;
    }
    instance::FluxInstance flux = load_input(options.input);
    reconcile::RegistryArtifacts artifacts = registry_artifacts(options.input.registry);
    // Connected once the instance has rendered, or to read its pull secret.
    std::optional<ConnectedCluster> connected;
    auto cluster = [&]() -> kube::Cluster& {
      if (!connected) connected = connect(options.cluster, /*dry_run=*/true);
      return *connected->cluster;
    };
    reconcile::InstanceDiff diff =
        reconcile::plan_instance(cluster, artifacts, std::move(flux),
                                 render_request(options.input, /*revision=*/false),
                                 say_distribution, options.prune)
            .diff;
    if (options.output == "json") {
      std::cout << printable_json(reconcile::diff_json(diff).dump(4)) << "\n";
    } else {
      // The summary first, so that a long upgrade diff says what it holds.
      std::string summary = reconcile::diff_summary(diff);
      std::cout << summary << (summary.empty() || options.summary ? "" : "\n");
      if (!options.summary) std::cout << color::diff(diff.text);
    }
    std::cerr << count_of(diff.changed, "object") << " would change\n";
    if (diff.changed > 0) throw ExitStatus{1};
  } catch (const Error& e) {
    throw CommandError(e.what(), kDiffError);
  }
}

}  // namespace

void add_diff_command(CLI::App& app, yaml::ParseCache& parse_cache) {
  auto options = std::make_shared<DiffCommandOptions>();
  options->input.parse_cache = &parse_cache;
  auto* cmd = app.add_subcommand(
      "diff",
      "Show what apply would change: a unified diff per object from a server-side dry run, the "
      "objects it would create and prune; exit 1 when something would change");
  add_instance_flags(*cmd, options->input);
  options->input.mode = render::Mode::operator_controller;
  add_cluster_flags(*cmd, options->cluster);
  add_fleet_flags(*cmd, options->fleet);
  cmd->add_option("--version", options->input.version,
                  "Diff against this Flux version instead of .spec.distribution.version (an "
                  "upgrade preview), e.g. 2.9.x")
      ->option_text("VERSION");
  add_prune_crds_flag(*cmd, options->prune.prune_crds);
  cmd->add_option("-o,--output", options->output,
                  "json: each object's action and the fields that change, what each prune takes "
                  "or keeps, as one JSON document (README: diff -o json)")
      ->check(CLI::IsMember({"json"}))
      ->option_text("json");
  cmd->add_flag("--summary", options->summary,
                "Print only the summary: the objects per action and the images that change")
      ->excludes("--output");
  cmd->callback([options] { run_diff(*options); });
}

}  // namespace fluxop::cli
