#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "cli/change_output.h"
#include "cli/cluster_flags.h"
#include "cli/commands.h"
#include "cli/fleet.h"
#include "cli/instance_input.h"
#include "cli/instance_target.h"
#include "cli/notice.h"
#include "cli/output.h"
#include "cli/registry_flags.h"
#include "cli/table.h"
#include "core/distribution/resolve.h"
#include "core/file.h"
#include "core/names.h"
#include "core/reconcile/instance_object.h"
#include "core/reconcile/pipeline.h"
#include "core/report/report.h"
#include "core/report/write.h"
#include "core/rfc3339.h"
#include "core/status/fleet_page.h"

namespace fluxop::cli {

namespace {

struct ReportCommandOptions {
  ClusterFlags cluster;
  FleetFlags fleet;
  InstanceTarget target;
  std::string ns;  // the target's
  std::string output = "table";
  bool write = false;
  std::string dry_run = "none";  // --write's
  // -o html: the distribution each cluster's range is resolved against.
  std::string distribution_artifact;
  RegistryFlags registry;
};

// How long --write waits for the FluxReport CRD it installs to be served.
constexpr std::chrono::minutes kCrdTimeout{2};

std::string yes_no(bool ready) { return ready ? "True" : "False"; }

// A message on one line of a table: a sync's status may hold its source's
// error on a second line.
std::string one_line(std::string text) {
  for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at))
    text.replace(at, 1, "; ");
  return text;
}

std::string or_dash(const std::string& text) { return text.empty() ? "-" : text; }

// The report as tables, one per part, as `flux get` shows them.
std::string report_table(const report::ReportSpec& spec) {
  const report::Distribution& distribution = spec.distribution;
  std::vector<std::vector<std::string>> overview{
      {"DISTRIBUTION", "STATUS", "MANAGED BY", "ENTITLEMENT", "KUBERNETES", "PLATFORM", "NODES"}};
  overview.push_back({or_dash(distribution.version), distribution.status,
                      or_dash(distribution.managed_by), distribution.entitlement,
                      spec.cluster ? spec.cluster->server_version : "-",
                      spec.cluster ? spec.cluster->platform : "-",
                      spec.cluster ? std::to_string(spec.cluster->nodes) : "-"});
  std::string out = render_table(overview) + "\n";

  if (spec.components.empty()) {
    out += "No Flux components.\n\n";
  } else {
    std::vector<std::vector<std::string>> components{{"COMPONENT", "READY", "STATUS", "IMAGE"}};
    for (const report::Component& component : spec.components) {
      components.push_back(
          {component.name, yes_no(component.ready), component.status, component.image});
    }
    out += render_table(components) + "\n";
  }

  if (spec.reconcilers.empty()) {
    out += "No Flux reconcilers.\n\n";
  } else {
    std::vector<std::vector<std::string>> reconcilers{
        {"API VERSION", "KIND", "RUNNING", "FAILING", "SUSPENDED", "STORAGE"}};
    for (const report::Reconciler& reconciler : spec.reconcilers) {
      const report::ReconcilerStats& stats = reconciler.stats;
      reconcilers.push_back({reconciler.api_version, reconciler.kind, std::to_string(stats.running),
                             std::to_string(stats.failing), std::to_string(stats.suspended),
                             or_dash(stats.total_size)});
    }
    out += render_table(reconcilers) + "\n";
  }

  if (!spec.sync) return out + "No cluster sync.\n";
  const report::Sync& sync = *spec.sync;
  return out + render_table({{"SYNC", "READY", "PATH", "SOURCE", "STATUS"},
                             {sync.id, yes_no(sync.ready), or_dash(sync.path), or_dash(sync.source),
                              one_line(sync.status)}});
}

struct ComputedReport {
  report::ReportSpec spec;
  std::vector<ssa::Change> changes;         // --write's
  std::optional<nlohmann::json> instance;   // -o html's: the FluxInstance, when there is one
  std::vector<status::ObjectEvent> events;  // -o html's: its newest Events
};

// The report of one cluster, written when asked; what could not be computed
// is warned about.
ComputedReport compute_report(const ReportCommandOptions& options, kube::Cluster& cluster) {
  auto started = std::chrono::steady_clock::now();
  report::Report computed = report::compute(cluster, options.ns, options.cluster.field_manager,
                                            report::Resources::left_out);
  auto took = std::chrono::steady_clock::now() - started;
  // What could not be computed is said, and the rest reported, as the
  // operator writes a partial report.
  for (const std::string& error : computed.errors) print_warning(error);
  std::vector<ssa::Change> changes;
  if (options.write) {
    changes = report::write(
        cluster, computed.spec, options.ns,
        {took, utc_rfc3339(std::time(nullptr)), std::chrono::steady_clock::now() + kCrdTimeout});
  }
  std::optional<nlohmann::json> instance;
  std::vector<status::ObjectEvent> events;
  if (options.output == "html") {
    kube::ObjectKey key = target_key(options.target);
    instance = reconcile::get_live_instance(cluster, key);
    // The page without them rather than none: a user may read the
    // instance and not its namespace's Events.
    try {
      events = status::object_events(cluster, key);
    } catch (const Error& error) {
      print_warning(std::string("the FluxInstance's Events: ") + error.what());
    }
  }
  return {std::move(computed.spec), std::move(changes), std::move(instance), std::move(events)};
}

status::ClusterOverview overview_of(std::string context, ComputedReport computed) {
  status::ClusterOverview overview;
  overview.context = std::move(context);
  overview.instance = status::instance_state(computed.instance ? &*computed.instance : nullptr);
  overview.events = std::move(computed.events);
  overview.report = std::move(computed.spec);
  return overview;
}

// For each cluster's instance, whether the distribution holds a version its
// range takes newer than what runs: the distribution of --distribution-
// artifact, else of the instance's .spec.distribution.artifact, else
// FLUXOPCTL_DISTRIBUTION, what `fluxopctl pull` fetched, the cache (as
// build finds it), each opened once. What cannot be told is said once, and
// the page says "unknown".
void mark_newer_versions(const ReportCommandOptions& options,
                         std::vector<status::ClusterOverview>& clusters) {
  reconcile::RegistryArtifacts artifacts = registry_artifacts(options.registry);
  reconcile::RenderRequest request = distribution_request(options.distribution_artifact, nullptr);
  // By the instance's artifact (which the flag overrides): what it opened;
  // nullopt when it could not be (said once).
  std::map<std::string, std::optional<distribution::Distribution>> opened;
  std::set<std::string> said;
  for (status::ClusterOverview& cluster : clusters) {
    const status::InstanceState& state = cluster.instance;
    if (!state.found || !cluster.report) continue;
    cluster.newer_in_range = "unknown";
    try {
      auto [entry, added] = opened.try_emplace(state.artifact);
      if (added) {
        instance::FluxInstance flux;
        flux.distribution.artifact = state.artifact;
        std::string digest;
        entry->second = reconcile::locate_distribution(artifacts, flux, request, {}, digest);
      }
      if (!entry->second) continue;
      distribution::Version newest =
          distribution::resolve_version(*entry->second, state.version_range);
      std::optional<distribution::Version> running =
          distribution::parse_version(cluster.report->distribution.version);
      cluster.newer_in_range = !running || distribution::compare(newest, *running) > 0
                                   ? "v" + distribution::to_string(newest)
                                   : "none";
    } catch (const Error& error) {
      if (said.insert(error.what()).second)
        print_warning(std::string("a newer Flux version in range: ") + error.what());
    }
  }
}

// -o html: the fleet file, of one cluster or several.
void print_fleet_page(const ReportCommandOptions& options,
                      std::vector<status::ClusterOverview> clusters) {
  mark_newer_versions(options, clusters);
  std::cout << status::fleet_page(std::move(clusters), utc_rfc3339(std::time(nullptr)));
}

bool dry_run(const ReportCommandOptions& options) { return options.dry_run != "none"; }

void print_changes(const ReportCommandOptions& options, const std::vector<ssa::Change>& changes) {
  for (const ssa::Change& change : changes)
    print_notice(ssa::change_line(change) + (dry_run(options) ? " (server dry run)" : ""));
}

OutputFormat document_format(const ReportCommandOptions& options) {
  return options.output == "json" ? OutputFormat::Json : OutputFormat::Yaml;
}

// On several clusters: each one's tables headed by its context, then the
// summary; or one document keyed by context.
void run_fleet_report(const ReportCommandOptions& options,
                      const std::vector<std::string>& contexts) {
  std::vector<std::optional<ComputedReport>> computed(contexts.size());
  std::vector<fleet::ClusterResult> results =
      run_fleet(contexts, options.cluster, options.fleet, [&](const FleetMember& member) {
        ConnectedCluster connected = kube::connect(member.settings, dry_run(options));
        ComputedReport one = compute_report(options, *connected.cluster);
        print_changes(options, one.changes);
        computed[member.index] = std::move(one);
        return fleet::ClusterResult{fleet::Outcome::ok, ""};
      });
  if (options.output == "html") {
    std::vector<status::ClusterOverview> clusters;
    for (std::size_t i = 0; i < contexts.size(); ++i) {
      if (computed[i]) {
        clusters.push_back(overview_of(contexts[i], std::move(*computed[i])));
      } else {
        status::ClusterOverview failed;
        failed.context = contexts[i];
        failed.error = results[i].message.empty()
                           ? std::string(fleet::outcome_name(results[i].outcome))
                           : results[i].message;
        clusters.push_back(std::move(failed));
      }
    }
    print_fleet_page(options, std::move(clusters));
    exit_with(results, /*diff=*/false);
    return;
  }
  if (options.output == "table") {
    for (std::size_t i = 0; i < contexts.size(); ++i) {
      if (computed[i])
        std::cout << "# " << printable(contexts[i]) << "\n"
                  << report_table(computed[i]->spec) << "\n";
    }
    print_fleet_summary(contexts, results);
  } else {
    nlohmann::ordered_json document = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < contexts.size(); ++i) {
      if (computed[i])
        document[contexts[i]] = report::report_object(computed[i]->spec, options.ns);
      else
        document[contexts[i]] = {{"error", results[i].message}};
    }
    std::cout << render_document(document, document_format(options));
  }
  exit_with(results, /*diff=*/false);
}

void run_report(const ReportCommandOptions& options) {
  if (std::vector<std::string> contexts = fleet_contexts(options.cluster, options.fleet);
      !contexts.empty()) {
    run_fleet_report(options, contexts);
    return;
  }
  ConnectedCluster connected = connect(options.cluster, dry_run(options));
  // Written before anything is printed: a failed write leaves stdout empty.
  ComputedReport computed = compute_report(options, *connected.cluster);
  if (options.output == "table") {
    std::cout << report_table(computed.spec);
  } else if (options.output == "html") {
    print_changes(options, computed.changes);
    const std::string& context = connected.client->access().context;
    std::vector<status::ClusterOverview> clusters;
    clusters.push_back(overview_of(context.empty() ? "in-cluster" : context, std::move(computed)));
    print_fleet_page(options, std::move(clusters));
    return;
  } else {
    std::cout << render_document(report::report_object(computed.spec, options.ns),
                                 document_format(options));
  }
  print_changes(options, computed.changes);
}

// `report` under `parent`, its -o `output` by default.
void add_report_subcommand(CLI::App& parent, const std::string& output) {
  auto options = std::make_shared<ReportCommandOptions>();
  options->output = output;
  auto* cmd = parent.add_subcommand(
      "report",
      "Show the FluxReport of the Flux installation, as the Flux Operator computes it: "
      "distribution, cluster, components, reconcilers' statistics, cluster sync");
  add_cluster_flags(*cmd, options->cluster);
  add_fleet_flags(*cmd, options->fleet);
  // FILE, -f or -n: the instance's namespace, as get, wait and delete take it.
  add_instance_target(*cmd, options->target);
  cmd->add_option("-o,--output", options->output,
                  "table: readable tables; yaml or json: the FluxReport object; html: one "
                  "self-contained page, a row per cluster worst first, then each cluster's "
                  "overview (with --all-contexts: the fleet file)")
      ->check(CLI::IsMember({"table", "yaml", "json", "html"}))
      ->option_text("table|yaml|json|html (default " + output + ")");
  cmd->add_flag("--write", options->write,
                "Also server-side apply the report as the FluxReport `flux` in the namespace "
                "(installing the FluxReport CRD when the cluster has none)");
  add_dry_run_flag(*cmd, options->dry_run);
  cmd->add_option("--distribution-artifact", options->distribution_artifact,
                  "-o html: the Flux distribution each cluster's version range is resolved "
                  "against, for a newer version: oci://HOST/REPO[:TAG|@DIGEST], a directory or "
                  "file://DIR (default: the instance's .spec.distribution.artifact, "
                  "FLUXOPCTL_DISTRIBUTION, what `fluxopctl pull` fetched, the cache)")
      ->option_text("URL|DIR");
  add_registry_flags(*cmd, options->registry, /*offline=*/true);
  cmd->callback([options] {
    options->ns = target_key(options->target).ns;
    if (!is_dns_label(options->ns))
      throw CLI::ValidationError("--namespace",
                                 "'" + options->ns + "' " + std::string(kDnsLabel.requirement));
    if (dry_run(*options) && !options->write)
      throw CLI::ValidationError("--dry-run", "only with --write (report alone writes nothing)");
    run_report(*options);
  });
}

}  // namespace

void add_report_command(CLI::App& app) {
  add_report_subcommand(app, "table");
  // The upstream CLI's `flux-operator export report`, which prints the
  // FluxReport object: YAML by default.
  auto* export_command = app.add_subcommand(
      "export",
      "The upstream CLI's spelling: export report (-o yaml), export resource FluxInstance/flux");
  export_command->require_subcommand(1);
  add_report_subcommand(*export_command, "yaml");
  add_export_resource_command(*export_command);
}

}  // namespace fluxop::cli
