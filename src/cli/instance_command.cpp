#include "cli/instance_command.h"

#include "cli/change_output.h"
#include "cli/duration_check.h"

#include "core/error.h"
#include "core/kube/meta.h"
#include "core/reconcile/instance_object.h"
#include "core/reconcile/instance_requests.h"

namespace fluxop::cli {

using nlohmann::json;

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

json live_instance(kube::Cluster& cluster, const kube::ObjectKey& ref) {
  std::optional<json> live = reconcile::get_live_instance(cluster, ref);
  if (!live) throw Error(display_name(ref) + ": not found");
  return std::move(*live);
}

OutputFormat document_format(const InstanceCommandOptions& options) {
  return options.output == "json" ? OutputFormat::Json : OutputFormat::Yaml;
}

}  // namespace fluxop::cli
