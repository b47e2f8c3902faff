#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/output.h"
#include "core/file_system.h"
#include "core/kustomize/build.h"

namespace fluxop::cli {

namespace {

struct KustomizeOptions {
  std::string dir = ".";
  OutputFormat format = OutputFormat::Yaml;
};

}  // namespace

void add_kustomize_command(CLI::App& app, yaml::ParseCache& parse_cache) {
  auto options = std::make_shared<KustomizeOptions>();
  auto* cmd = app.add_subcommand(
      "kustomize", "Render a kustomization directory, as `kubectl kustomize DIR` does");
  cmd->add_option("dir", options->dir, "Kustomization directory")->default_str(".");
  add_output_flag(*cmd, options->format);
  cmd->callback([options, &parse_cache] {
    std::vector<yaml::Node> objects;
    for (auto& resource : kustomize::build(options->dir, disk(), &parse_cache))
      objects.push_back(std::move(resource.object()));
    // Rendered whole before printing, so a failure leaves stdout empty.
    std::cout << render_objects(objects, options->format);
  });
}

}  // namespace fluxop::cli
