// export resource FluxInstance/NAME: the upstream CLI's export of the live
// instance, to apply elsewhere (reconcile::exported_instance).
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/instance_command.h"
#include "core/ascii.h"
#include "core/error.h"
#include "core/reconcile/instance_object.h"

namespace fluxop::cli {

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
    std::cout << render_document(
        reconcile::exported_instance(live_instance(*connected.cluster, ref)),
        document_format(*options));
  });
}

}  // namespace fluxop::cli
