// get: the FluxInstance's status at a glance, every FluxInstance (-A), the
// Flux resources (`get all`, the upstream CLI's), one instance across a fleet.
#include <algorithm>
#include <iostream>
#include <iterator>
#include <memory>

#include "cli/commands.h"
#include "cli/instance_command.h"
#include "cli/notice.h"
#include "cli/table.h"
#include "core/ascii.h"
#include "core/error.h"
#include "core/kube/meta.h"
#include "core/reconcile/instance_object.h"
#include "core/reconcile/instance_requests.h"
#include "core/reconcile/prune.h"
#include "core/report/report.h"

namespace fluxop::cli {

namespace {

using nlohmann::json;

// An instance's Ready condition as the tables show it: Unknown when it has none.
struct ReadyCondition {
  std::string status = "Unknown";
  std::string reason;
  std::string message;
  std::string since = "Unknown";  // its lastTransitionTime
};

ReadyCondition ready_of(const json& live) {
  ReadyCondition out;
  if (const json* ready = kube::condition_at(live, "Ready")) {
    if (std::string status = kube::string_member(*ready, "status"); !status.empty())
      out.status = status;
    out.reason = kube::string_member(*ready, "reason");
    out.message = kube::string_member(*ready, "message");
    if (std::string since = kube::string_member(*ready, "lastTransitionTime"); !since.empty())
      out.since = since;
  }
  return out;
}

// The status at a glance: the instance, its components, its history;
// `wide` adds the revision's digest and the images' digests.
std::string status_tables(const json& live, bool wide) {
  const json& status = live.value("status", json::object());
  ReadyCondition ready = ready_of(live);
  std::size_t resources =
      status.value("inventory", json::object()).value("entries", json::array()).size();
  std::string suspended = reconcile::reconcile_disabled(live) ? "True" : "False";
  std::string revision = status.value("lastAppliedRevision", "-");
  std::vector<std::string> header = {"NAME",     "NAMESPACE", "READY",          "SUSPENDED",
                                     "REVISION", "RESOURCES", "LAST RECONCILED"};
  if (!wide) {
    header[4] = "FLUX";
    revision = revision.substr(0, revision.find('@'));
  }
  std::string out = render_table(
      {header,
       {kube::text_at(live, "/metadata/name"), kube::text_at(live, "/metadata/namespace"),
        ready.status, suspended, revision, std::to_string(resources), ready.since}});
  std::string message = ready.message;
  if (!message.empty()) out += "message: " + printable(message) + "\n";

  std::vector<std::vector<std::string>> components = {{"COMPONENT", "IMAGE"}};
  if (wide) components[0].push_back("DIGEST");
  for (const json& component : status.value("components", json::array())) {
    components.push_back({component.value("name", ""),
                          component.value("repository", "") + ":" + component.value("tag", "")});
    if (wide) components.back().push_back(component.value("digest", "-"));
  }
  if (components.size() > 1) out += "\n" + render_table(components);

  std::vector<std::vector<std::string>> history = {
      {"VERSION", "STATUS", "RECONCILES", "LAST RECONCILED", "DURATION"}};
  if (wide) history[0].push_back("DIGEST");
  for (const json& entry : status.value("history", json::array())) {
    history.push_back(
        {kube::text_at(entry, "/metadata/flux"), entry.value("lastReconciledStatus", ""),
         std::to_string(entry.value("totalReconciliations", 0)), entry.value("lastReconciled", ""),
         entry.value("lastReconciledDuration", "")});
    if (wide) history.back().push_back(entry.value("digest", ""));
  }
  if (history.size() > 1) out += "\n" + render_table(history);
  return out;
}

// Every FluxInstance of the cluster, a row each, as the upstream CLI's
// `get instances` lists them: a suspended one is READY Suspended.
std::string instance_list(const std::vector<json>& instances) {
  std::vector<std::vector<std::string>> rows = {
      {"NAMESPACE", "NAME", "RESOURCES", "READY", "MESSAGE", "LAST RECONCILED"}};
  for (const json& live : instances) {
    ReadyCondition ready = ready_of(live);
    std::size_t resources = live.value("status", json::object())
                                .value("inventory", json::object())
                                .value("entries", json::array())
                                .size();
    rows.push_back({kube::text_at(live, "/metadata/namespace"),
                    kube::text_at(live, "/metadata/name"), std::to_string(resources),
                    reconcile::reconcile_disabled(live) ? "Suspended" : ready.status,
                    one_line(ready.message), ready.since});
  }
  if (rows.size() == 1) return "No FluxInstance in the cluster.\n";
  return render_table(rows);
}

// The instance as kubectl get shows it: without its managedFields.
nlohmann::ordered_json shown(json live) {
  live["metadata"].erase("managedFields");
  return nlohmann::ordered_json::parse(live.dump());
}

// On several clusters: one table, a row per cluster (the CLUSTER column
// first), or one document keyed by context.
void run_fleet_get(const InstanceCommandOptions& options,
                   const std::vector<std::string>& contexts) {
  kube::ObjectKey ref = target_key(options.target);
  std::vector<json> lives(contexts.size());
  std::vector<fleet::ClusterResult> results =
      run_fleet(contexts, options.cluster, options.fleet, [&](const FleetMember& member) {
        ConnectedCluster connected = kube::connect(member.settings, /*dry_run=*/false);
        lives[member.index] = live_instance(*connected.cluster, ref);
        return fleet::ClusterResult{fleet::Outcome::ok, ""};
      });
  if (options.output == "table") {
    std::vector<std::vector<std::string>> rows = {
        {"CLUSTER", "READY", "FLUX", "REVISION", "LAST RECONCILED", "MESSAGE"}};
    for (std::size_t i = 0; i < contexts.size(); ++i) {
      if (results[i].outcome != fleet::Outcome::ok) {
        rows.push_back({contexts[i], "-", "-", "-", "-", one_line(results[i].message)});
        continue;
      }
      const json& live = lives[i];
      ReadyCondition ready = ready_of(live);
      json history = live.value("status", json::object()).value("history", json::array());
      rows.push_back({contexts[i], ready.status,
                      history.empty() ? "-" : kube::text_at(history[0], "/metadata/flux"),
                      live.value("status", json::object()).value("lastAppliedRevision", "-"),
                      ready.since, one_line(ready.message)});
    }
    std::cout << render_table(rows);
  } else {
    nlohmann::ordered_json document = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < contexts.size(); ++i) {
      document[contexts[i]] = results[i].outcome == fleet::Outcome::ok
                                  ? shown(lives[i])
                                  : nlohmann::ordered_json{{"error", results[i].message}};
    }
    std::cout << render_document(document, document_format(options));
  }
  exit_with(results, /*diff=*/false);
}

// `get all`, as the upstream CLI lists the Flux resources: the instances
// and every custom resource of the Flux CRDs, with their Ready status (a
// suspended one is Suspended), in -n or every namespace (-A), of --kind,
// with --ready-status.
void run_get_all(const InstanceCommandOptions& options) {
  ConnectedCluster connected = connect(options.cluster, /*dry_run=*/false);
  std::string ns = options.target.ns.empty() ? "flux-system" : options.target.ns;
  std::vector<report::FluxResource> resources;
  for (const json& live : connected.cluster->list(reconcile::instance_ref("", ""), {})) {
    ReadyCondition ready = ready_of(live);
    report::FluxResource& instance = resources.emplace_back();
    instance.kind = "FluxInstance";
    instance.name = kube::text_at(live, "/metadata/name");
    instance.ns = kube::text_at(live, "/metadata/namespace");
    instance.ready = ready.status;
    instance.reason = ready.reason;
    instance.suspended = reconcile::reconcile_disabled(live);
  }
  report::Report computed = report::compute(*connected.cluster, ns, options.cluster.field_manager);
  for (const std::string& error : computed.errors) print_warning(error);
  resources.insert(resources.end(), std::make_move_iterator(computed.resources.begin()),
                   std::make_move_iterator(computed.resources.end()));
  std::vector<std::vector<std::string>> rows = {{"KIND", "NAME", "READY", "REASON"}};
  if (options.all_namespaces) rows[0].insert(rows[0].begin(), "NAMESPACE");
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const report::FluxResource& resource : resources) {
    if (!options.all_namespaces && resource.ns != ns) continue;
    if (!options.kinds.empty() &&
        std::none_of(options.kinds.begin(), options.kinds.end(), [&](const std::string& kind) {
          return lowercase(kind) == lowercase(resource.kind);
        }))
      continue;
    std::string ready = resource.suspended ? "Suspended" : resource.ready;
    if (!options.ready_status.empty() && lowercase(ready) != lowercase(options.ready_status))
      continue;
    std::vector<std::string> row = {resource.kind, resource.name, ready, resource.reason};
    if (options.all_namespaces) row.insert(row.begin(), resource.ns);
    rows.push_back(std::move(row));
    items.push_back({{"kind", resource.kind},
                     {"name", resource.name},
                     {"namespace", resource.ns},
                     {"ready", ready},
                     {"reason", resource.reason}});
  }
  if (options.output != "table" && options.output != "wide") {
    std::cout << render_document(items, document_format(options));
  } else if (rows.size() == 1) {
    std::cout << "No Flux resources" << (options.all_namespaces ? "" : " in " + ns) << ".\n";
  } else {
    std::cout << render_table(rows);
  }
}

// `get -A`, and the upstream spelling `get instances` without a name.
bool lists_instances(const InstanceCommandOptions& options) {
  return options.all_namespaces ||
         (options.upstream->parsed() && options.upstream->get_option("NAME")->count() == 0 &&
          options.target.ns.empty());
}

void run_get(const InstanceCommandOptions& options) {
  if (options.all->parsed()) {
    run_get_all(options);
    return;
  }
  if (std::vector<std::string> contexts = fleet_contexts(options.cluster, options.fleet);
      !contexts.empty()) {
    run_fleet_get(options, contexts);
    return;
  }
  if (lists_instances(options)) {
    ConnectedCluster connected = connect(options.cluster, /*dry_run=*/false);
    std::vector<json> instances = connected.cluster->list(reconcile::instance_ref("", ""), {});
    if (options.output == "table" || options.output == "wide") {
      std::cout << instance_list(instances);
      return;
    }
    nlohmann::ordered_json items = nlohmann::ordered_json::array();
    for (json& live : instances) items.push_back(shown(std::move(live)));
    std::cout << render_document(
        nlohmann::ordered_json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}},
        document_format(options));
    return;
  }
  kube::ObjectKey ref = target_key(options.target);
  ConnectedCluster connected = connect(options.cluster, /*dry_run=*/false);
  json live = live_instance(*connected.cluster, ref);
  // A CRD pruned and held Terminating by its resources' finalizers: the
  // status says nothing of it (it left the inventory), get says it, when
  // the caller may list CRDs. What the lookup meets is a warning: get still
  // shows the instance.
  try {
    for (const std::string& going : reconcile::terminating_objects(
             *connected.cluster, ref,
             {{"apiextensions.k8s.io", "v1", "CustomResourceDefinition", "", ""}}))
      print_notice("warning: being deleted: " + going);
  } catch (const Error& error) {
    auto* refused = dynamic_cast<const kube::ApiError*>(&error);
    if (!refused || refused->status() != 403)
      print_notice("warning: could not tell which CRDs are being deleted: " +
                   std::string(error.what()));
  }
  if (options.output == "table" || options.output == "wide") {
    std::cout << status_tables(live, options.output == "wide");
    return;
  }
  try {
    std::cout << render_document(shown(std::move(live)), document_format(options));
  } catch (const Error& e) {
    throw Error(display_name(ref) + ": " + e.what());
  }
}

}  // namespace

void add_get_command(CLI::App& app) {
  auto get = std::make_shared<InstanceCommandOptions>();
  auto* cmd = add_instance_command(
      app, "get",
      "Show the FluxInstance's status at a glance: ready, Flux version, components with their "
      "images, last reconcile, history (-o wide: the digests too); -A: every FluxInstance",
      get, /*writes=*/false);
  cmd->add_option("-o,--output", get->output,
                  "table: readable tables; wide: with the revision's and images' digests; yaml "
                  "or json: the FluxInstance object")
      ->check(CLI::IsMember({"table", "wide", "yaml", "json"}))
      ->option_text("table|wide|yaml|json (default table)");
  cmd->add_flag("-A,--all-namespaces", get->all_namespaces,
                "List every FluxInstance of the cluster, a row each (as `get instances`)");
  // The upstream CLI's `get instances` (its plural), and its `get all`.
  get->upstream->alias("instances");
  get->all = cmd->add_subcommand(
      "all",
      "The upstream CLI's spelling: get all [-A] [--kind KIND,...] [--ready-status S]: the "
      "Flux resources and their Ready status");
  get->all->alias("resources");
  get->all->fallthrough();
  get->all->add_option("--kind", get->kinds, "Only these kinds (comma-separated)")
      ->delimiter(',')
      ->option_text("KIND,...");
  get->all->add_option("--ready-status", get->ready_status, "Only those whose Ready is this")
      ->check(CLI::IsMember({"True", "False", "Unknown", "Suspended"}, CLI::ignore_case))
      ->option_text("True|False|Unknown|Suspended");
  cmd->callback([get] { run_get(*get); });
}

}  // namespace fluxop::cli
