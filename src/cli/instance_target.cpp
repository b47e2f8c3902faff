#include "cli/instance_target.h"

#include "cli/instance_input.h"
#include "core/reconcile/apply.h"

namespace fluxop::cli {

void add_instance_target(CLI::App& command, InstanceTarget& target) {
  auto* file = command.add_option("FILE", target.file, "FluxInstance YAML file ('-' for stdin)")
                   ->option_text(" ");
  auto* filename =
      command
          .add_option("-f,--filename", target.filename, "FluxInstance YAML file ('-' for stdin)")
          ->option_text("FILE")
          ->excludes(file);
  command
      .add_option("-n,--namespace", target.ns,
                  "The namespace of the FluxInstance flux, when no FILE names it")
      ->option_text("NAMESPACE (default flux-system)")
      ->excludes(file)
      ->excludes(filename);
}

void add_upstream_spelling(CLI::App& command, bool name_required) {
  auto* instance = command.add_subcommand(
      "instance", "The upstream CLI's spelling: " + command.get_name() + " instance " +
                      (name_required ? "flux" : "[flux]") + " [-n NAMESPACE]");
  // Its flags are the command's.
  instance->fallthrough();
  instance->add_option("NAME", "The FluxInstance's name: flux")
      ->required(name_required)
      ->check(CLI::Validator(
          [](const std::string& name) {
            return name == "flux" ? std::string()
                                  : "'" + name + "' is not flux, the one name a FluxInstance has";
          },
          "flux"))
      ->option_text(" ");
}

kube::ObjectKey target_key(const InstanceTarget& target) {
  if (target.file.empty() && target.filename.empty())
    return reconcile::instance_ref(target.ns.empty() ? "flux-system" : target.ns, "flux");
  InstanceInput input;
  input.file = target.file;
  input.filename = target.filename;
  // Only the name and namespace count: fields a newer CRD knows are fine.
  input.allow_unknown_fields = true;
  instance::FluxInstance flux = load_input(input);
  return reconcile::instance_ref(flux.ns, flux.name);
}

}  // namespace fluxop::cli
