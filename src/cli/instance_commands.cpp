// The commands on the FluxInstance in the cluster, as the upstream CLI has
// them for `instance`: get (its status at a glance), wait (until Ready),
// reconcile, suspend and resume (its annotations, which the operator and
// `apply --watch` honour).
#include <algorithm>
#include <ctime>
#include <iostream>
#include <memory>

#include "cli/change_output.h"
#include "cli/cluster_flags.h"
#include "cli/commands.h"
#include "cli/duration_check.h"
#include "cli/fleet.h"
#include "cli/instance_target.h"
#include "cli/interrupt.h"
#include "cli/notice.h"
#include "cli/output.h"
#include "cli/table.h"
#include "core/ascii.h"
#include "core/error.h"
#include "core/kube/meta.h"
#include "core/reconcile/apply.h"
#include "core/reconcile/instance_requests.h"
#include "core/reconcile/prune.h"
#include "core/report/report.h"

namespace fluxop::cli {

namespace {

using nlohmann::json;

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

json live_instance(kube::Cluster& cluster, const kube::ObjectKey& ref) {
  std::optional<json> live = reconcile::get_live_instance(cluster, ref);
  if (!live) throw Error(display_name(ref) + ": not found");
  return std::move(*live);
}

// The instance as kubectl get shows it: without its managedFields.
nlohmann::ordered_json shown(json live) {
  live["metadata"].erase("managedFields");
  return nlohmann::ordered_json::parse(live.dump());
}

OutputFormat document_format(const InstanceCommandOptions& options) {
  return options.output == "json" ? OutputFormat::Json : OutputFormat::Yaml;
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
  std::vector<report::ResourceLabels> resources;
  for (const json& live : connected.cluster->list(reconcile::instance_ref("", ""), {})) {
    ReadyCondition ready = ready_of(live);
    resources.push_back({{"kind", "FluxInstance"},
                         {"name", kube::text_at(live, "/metadata/name")},
                         {"exported_namespace", kube::text_at(live, "/metadata/namespace")},
                         {"ready", ready.status},
                         {"reason", ready.reason},
                         {"suspended", reconcile::reconcile_disabled(live) ? "True" : "False"}});
  }
  report::Report computed = report::compute(*connected.cluster, ns, options.cluster.field_manager);
  for (const std::string& error : computed.errors) print_warning(error);
  resources.insert(resources.end(), computed.resources.begin(), computed.resources.end());
  std::vector<std::vector<std::string>> rows = {{"KIND", "NAME", "READY", "REASON"}};
  if (options.all_namespaces) rows[0].insert(rows[0].begin(), "NAMESPACE");
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (report::ResourceLabels& resource : resources) {
    if (!options.all_namespaces && resource["exported_namespace"] != ns) continue;
    if (!options.kinds.empty() &&
        std::none_of(options.kinds.begin(), options.kinds.end(), [&](const std::string& kind) {
          return lowercase(kind) == lowercase(resource["kind"]);
        }))
      continue;
    std::string ready = resource["suspended"] == "True" ? "Suspended" : resource["ready"];
    if (!options.ready_status.empty() && lowercase(ready) != lowercase(options.ready_status))
      continue;
    std::vector<std::string> row = {resource["kind"], resource["name"], ready, resource["reason"]};
    if (options.all_namespaces) row.insert(row.begin(), resource["exported_namespace"]);
    rows.push_back(std::move(row));
    items.push_back({{"kind", resource["kind"]},
                     {"name", resource["name"]},
                     {"namespace", resource["exported_namespace"]},
                     {"ready", ready},
                     {"reason", resource["reason"]}});
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

// Waits for the answer to the request at `requested_at` ("" for none);
// returns the instance's Ready message.
std::string wait_for(const InstanceCommandOptions& options, kube::Cluster& cluster,
                     const kube::ObjectKey& ref, const std::string& requested_at) {
  catch_interrupts();
  print_notice("waiting for " + display_name(ref) +
               (requested_at.empty() ? " to be ready" : " to be reconciled"));
  std::string ready;
  run_interruptible([&] {
    ready = reconcile::wait_ready(cluster, ref, requested_at,
                                  std::chrono::steady_clock::now() + duration_flag(options.timeout),
                                  interruption, stderr_wait_status());
  });
  return ready;
}

// reconcile, suspend and resume: the annotations, then the wait when asked;
// returns the last line to say.
std::string request(const InstanceCommandOptions& options, kube::Cluster& cluster,
                    const std::string& command) {
  kube::ObjectKey ref = target_key(options.target);
  std::string now = reconcile::request_time(std::chrono::system_clock::now());
  std::map<std::string, std::string> annotations;
  if (command == "suspend") {
    annotations[std::string(reconcile::kReconcileAnnotation)] = "disabled";
  } else {
    annotations[std::string(reconcile::kRequestedAtAnnotation)] = now;
    if (options.force) annotations[std::string(reconcile::kForceAtAnnotation)] = now;
    if (command == "resume") annotations[std::string(reconcile::kReconcileAnnotation)] = "enabled";
  }
  reconcile::annotate_instance(cluster, ref, annotations);
  // The annotations went as a server dry run: nothing to wait for.
  if (options.dry())
    return display_name(ref) + ": reconciliation would be " +
           (command == "suspend"  ? "suspended"
            : command == "resume" ? "resumed"
                                  : "requested") +
           " (server dry run; nothing was written)";
  if (command == "suspend") return display_name(ref) + ": reconciliation suspended";
  std::string requested = display_name(ref) + ": reconciliation " +
                          (command == "resume" ? "resumed" : "requested") + " at " + now;
  // Without the operator or a daemon (the CI model), the request waits for
  // whatever starts next: said at once rather than after the timeout.
  std::optional<std::string> reconciler = reconcile::find_reconciler(cluster, ref.ns);
  std::string nothing;
  if (reconciler && reconciler->empty()) {
    nothing =
        display_name(ref) + ": nothing reconciles it (no operator Deployment in " + ref.ns +
        ", no Lease " + ref.ns + "/" + std::string(reconcile::kOperatorLease) + " or " + ref.ns +
        "/" + std::string(reconcile::kWatchLease) +
        " renewed by `fluxopctl apply --watch`): the request waits for one; to reconcile "
        "now, run `fluxopctl apply FILE`, or start `fluxopctl apply --watch --from-cluster -n " +
        ref.ns + "`";
  }
  if (!options.wait) {
    if (!nothing.empty()) print_notice("warning: " + nothing);
    return requested;
  }
  print_notice(requested);
  if (!nothing.empty()) throw Error(nothing);
  return wait_for(options, cluster, ref, now);
}

// wait, suspend, resume (`command`) on several clusters: each one's lines
// prefixed by its context, then the summary.
void run_fleet_request(const InstanceCommandOptions& options,
                       const std::vector<std::string>& contexts, const std::string& command) {
  std::vector<fleet::ClusterResult> results =
      run_fleet(contexts, options.cluster, options.fleet, [&](const FleetMember& member) {
        ConnectedCluster connected = kube::connect(member.settings, options.dry());
        std::string said = command == "wait" ? wait_for(options, *connected.cluster,
                                                        target_key(options.target), "")
                                             : request(options, *connected.cluster, command);
        print_notice(said);
        return fleet::ClusterResult{fleet::Outcome::ok, said};
      });
  print_fleet_summary(contexts, results);
  exit_with(results, /*diff=*/false);
}

void run_wait(const InstanceCommandOptions& options) {
  if (std::vector<std::string> contexts = fleet_contexts(options.cluster, options.fleet);
      !contexts.empty()) {
    run_fleet_request(options, contexts, "wait");
    return;
  }
  kube::ObjectKey ref = target_key(options.target);
  ConnectedCluster connected = connect(options.cluster, /*dry_run=*/false);
  print_notice(wait_for(options, *connected.cluster, ref, ""));
}

void run_request(const InstanceCommandOptions& options, const std::string& command) {
  if (command != "reconcile") {
    if (std::vector<std::string> contexts = fleet_contexts(options.cluster, options.fleet);
        !contexts.empty()) {
      run_fleet_request(options, contexts, command);
      return;
    }
  }
  ConnectedCluster connected = connect(options.cluster, options.dry());
  print_notice(request(options, *connected.cluster, command));
}

CLI::App* add_instance_command(CLI::App& app, const std::string& name,
                               const std::string& description,
                               std::shared_ptr<InstanceCommandOptions> options, bool writes) {
  auto* cmd = app.add_subcommand(name, description);
  add_instance_target(*cmd, options->target);
  if (writes) {
    options->cluster.field_manager = std::string(reconcile::kCliFieldManager);
    add_dry_run_flag(*cmd, options->dry_run);
  }
  add_cluster_flags(*cmd, options->cluster, writes);
  if (name != "reconcile") add_fleet_flags(*cmd, options->fleet);
  options->upstream =
      add_upstream_spelling(*cmd, name == "get" ? UpstreamName::optional : UpstreamName::required);
  add_operator_kind_refusals(*cmd);
  if (name == "reconcile")
    add_upstream_refusal(*cmd, "all,resources",
                         "`flux reconcile KIND NAME` reconciles a Flux resource");
  if (name == "reconcile" || name == "suspend" || name == "resume")
    add_upstream_refusal(*cmd, "resource",
                         "`flux " + name + " KIND NAME` does it for a Flux resource");
  return cmd;
}

void add_timeout_flag(CLI::App& cmd, InstanceCommandOptions& options) {
  cmd.add_option("--timeout", options.timeout, "How long to wait for the instance to be ready")
      ->check(duration_check("5m"))
      ->option_text("DURATION (default 5m)");
}

void add_wait_flag(CLI::App& cmd, InstanceCommandOptions& options) {
  cmd.add_flag("--wait,!--no-wait", options.wait,
               "Wait for the reconciliation to finish and the instance to be ready (default "
               "true)");
  add_timeout_flag(cmd, options);
}

// The instance as the upstream CLI's `export resource` exports it, to apply
// elsewhere: no status, of the metadata only the name, namespace, labels and
// annotations, without the request annotation and the operator's ownership
// labels.
nlohmann::ordered_json exported(json live) {
  json metadata = live["metadata"];
  json clean = {{"name", metadata.value("name", "")},
                {"namespace", metadata.value("namespace", "")}};
  if (json labels = metadata.value("labels", json::object()); labels.is_object()) {
    for (const char* owner : {"fluxcd.controlplane.io/name", "fluxcd.controlplane.io/namespace"})
      labels.erase(owner);
    if (!labels.empty()) clean["labels"] = labels;
  }
  if (json annotations = metadata.value("annotations", json::object()); annotations.is_object()) {
    annotations.erase(std::string(reconcile::kRequestedAtAnnotation));
    if (!annotations.empty()) clean["annotations"] = annotations;
  }
  nlohmann::ordered_json object = {{"apiVersion", live.value("apiVersion", "")},
                                   {"kind", live.value("kind", "")},
                                   {"metadata", nlohmann::ordered_json::parse(clean.dump())}};
  if (live.contains("spec")) object["spec"] = nlohmann::ordered_json::parse(live["spec"].dump());
  return object;
}

}  // namespace

void add_export_resource_command(CLI::App& export_command) {
  auto options = std::make_shared<InstanceCommandOptions>();
  options->output = "yaml";
  auto resource = std::make_shared<std::string>();
  auto* cmd = export_command.add_subcommand(
      "resource", "The upstream CLI's spelling: export resource FluxInstance/flux [-n NAMESPACE]");
  cmd->add_option("KIND/NAME", *resource, "FluxInstance/flux")->required()->option_text(" ");
  cmd->add_option("-o,--output", options->output, "yaml or json")
      ->check(CLI::IsMember({"yaml", "json"}))
      ->option_text("yaml|json (default yaml)");
  add_cluster_flags(*cmd, options->cluster, /*writes=*/false);
  global_option(*cmd, "--namespace").each([options](const std::string& value) {
    options->target.ns = value;
  });
  cmd->callback([options, resource] {
    std::size_t slash = resource->find('/');
    std::string kind = resource->substr(0, slash);
    if (slash == std::string::npos || resource->find('/', slash + 1) != std::string::npos)
      throw CommandError("KIND/NAME: " + quote(*resource) + " is not KIND/NAME", kExitUsage);
    if (lowercase(kind) != "fluxinstance")
      throw CommandError("KIND/NAME: fluxopctl exports the FluxInstance alone, not " + quote(kind) +
                             " (kubectl get -o yaml exports the others)",
                         kExitUsage);
    kube::ObjectKey ref =
        reconcile::instance_ref(options->target.ns.empty() ? "flux-system" : options->target.ns,
                                resource->substr(slash + 1));
    ConnectedCluster connected = connect(options->cluster, /*dry_run=*/false);
    std::cout << render_document(exported(live_instance(*connected.cluster, ref)),
                                 document_format(*options));
  });
}

void add_instance_commands(CLI::App& app) {
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

  auto wait = std::make_shared<InstanceCommandOptions>();
  cmd = add_instance_command(
      app, "wait",
      "Wait until the FluxInstance is ready; a failure, its suspension or the timeout is an "
      "error naming what is not ready",
      wait, /*writes=*/false);
  add_timeout_flag(*cmd, *wait);
  cmd->callback([wait] { run_wait(*wait); });

  auto reconcile = std::make_shared<InstanceCommandOptions>();
  cmd = add_instance_command(
      app, "reconcile",
      "Request a reconciliation of the FluxInstance (reconcile.fluxcd.io/requestedAt), as "
      "`flux-operator reconcile instance` does, and wait for it",
      reconcile, /*writes=*/true);
  cmd->add_flag("--force", reconcile->force,
                "Also migrate every Flux custom resource to its latest API version "
                "(reconcile.fluxcd.io/forceAt)");
  add_wait_flag(*cmd, *reconcile);
  cmd->callback([reconcile] { run_request(*reconcile, "reconcile"); });

  auto suspend = std::make_shared<InstanceCommandOptions>();
  cmd = add_instance_command(
      app, "suspend",
      "Suspend the FluxInstance's reconciliation (fluxcd.controlplane.io/reconcile: disabled): "
      "the operator and the daemon pause, a one-shot apply refuses it unless forced",
      suspend, /*writes=*/true);
  cmd->callback([suspend] { run_request(*suspend, "suspend"); });

  auto resume = std::make_shared<InstanceCommandOptions>();
  cmd = add_instance_command(
      app, "resume",
      "Resume the FluxInstance's reconciliation (fluxcd.controlplane.io/reconcile: enabled, "
      "and a reconcile requested), and wait for it",
      resume, /*writes=*/true);
  add_wait_flag(*cmd, *resume);
  cmd->callback([resume] { run_request(*resume, "resume"); });
}

}  // namespace fluxop::cli
