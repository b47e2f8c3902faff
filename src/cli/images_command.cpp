#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/image_selection.h"
#include "cli/output.h"
#include "cli/table.h"

namespace fluxop::cli {

namespace {

using nlohmann::ordered_json;

struct ImagesOptions {
  ImageSelectionFlags selection;
  std::string output = "text";
};

void run_images(const ImagesOptions& options) {
  SelectedImages selected = select_images(options.selection);
  const instance::FluxInstance* flux = selected.instance ? &*selected.instance : nullptr;
  if (options.output == "json") {
    ordered_json versions = ordered_json::array();
    for (const distribution::VersionImages& version : selected.versions) {
      ordered_json images = ordered_json::array();
      for (const distribution::CatalogImage& image : version.images) {
        images.push_back({{"component", distribution::catalog_component(image)},
                          {"name", distribution::installed_name(image, flux)},
                          {"tag", image.new_tag},
                          {"digest", image.digest},
                          {"source", image.name}});
      }
      versions.push_back({{"version", version.version.original},
                          {"variant", version.variant},
                          {"images", std::move(images)}});
    }
    std::cout << render_document(versions, OutputFormat::Json);
    return;
  }
  std::vector<std::vector<std::string>> rows{{"VERSION", "COMPONENT", "IMAGE"}};
  for (const distribution::VersionImages& version : selected.versions) {
    for (const distribution::CatalogImage& image : version.images) {
      rows.push_back(
          {version.version.original, distribution::catalog_component(image),
           distribution::installed_name(image, flux) + ":" + image.new_tag + "@" + image.digest});
    }
  }
  std::cout << render_table(rows);
}

}  // namespace

void add_images_command(CLI::App& app) {
  auto options = std::make_shared<ImagesOptions>();
  CLI::App* command = app.add_subcommand(
      "images",
      "List the images, by digest, that a FluxInstance (or a version range and variant) installs");
  add_image_selection_flags(*command, options->selection);
  add_artifact_verify_flags(*command, options->selection.input.registry);
  command->add_option("-o,--output", options->output, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->option_text("text|json");
  command->callback([options] { run_images(*options); });
}

}  // namespace fluxop::cli
