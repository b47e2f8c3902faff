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

CLI::App* add_upstream_spelling(CLI::App& command, UpstreamName name) {
  std::string usage = command.get_name() + " instance" +
                      (name == UpstreamName::required   ? " flux [-n NAMESPACE]"
                       : name == UpstreamName::optional ? " [flux] [-n NAMESPACE]"
                                                        : " -f FILE");
  auto* instance = command.add_subcommand("instance", "The upstream CLI's spelling: " + usage);
  // Its flags are the command's.
  instance->fallthrough();
  if (name == UpstreamName::none) return instance;
  instance->add_option("NAME", "The FluxInstance's name: flux")
      ->required(name == UpstreamName::required)
      ->check(CLI::Validator(
          [](const std::string& name) {
            return name == "flux" ? std::string()
                                  : "'" + name + "' is not flux, the one name a FluxInstance has";
          },
          "flux"))
      ->option_text(" ");
  return instance;
}

void add_upstream_refusal(CLI::App& command, const std::string& words, const std::string& why) {
  std::vector<std::string> names = CLI::detail::split(words, ',');
  auto* refused = command.add_subcommand(names.front(), "")->group("");
  for (std::size_t i = 1; i < names.size(); ++i) refused->alias(names[i]);
  refused->allow_extras();
  refused->prefix_command();
  std::string line = command.get_name() + " " + names.front();
  refused->parse_complete_callback([line, why] {
    throw CLI::ValidationError(line, "the upstream CLI's, not fluxopctl's: " + why);
  });
}

void add_operator_kind_refusals(CLI::App& command) {
  add_upstream_refusal(command, "resourceset,resourcesets,rset",
                       "ResourceSets are not fluxopctl's (flux-operator handles them)");
  add_upstream_refusal(
      command, "inputprovider,rsip,resourcesetinputprovider,resourcesetinputproviders",
      "ResourceSetInputProviders are not fluxopctl's (flux-operator handles them)");
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
