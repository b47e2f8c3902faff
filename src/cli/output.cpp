#include "cli/output.h"

#include "core/yaml/emit.h"
#include "core/yaml/json.h"

namespace fluxop::cli {

void add_output_flag(CLI::App& command, OutputFormat& format) {
  command
      .add_option_function<std::string>(
          "-o,--output",
          [&format](const std::string& value) {
            format = value == "json" ? OutputFormat::Json : OutputFormat::Yaml;
          },
          "Output format: yaml or json")
      ->check(CLI::IsMember({"yaml", "json"}))
      ->option_text("yaml|json (default yaml)");
}

std::string render_document(const nlohmann::ordered_json& document, OutputFormat format) {
  if (format == OutputFormat::Json) return document.dump(4) + "\n";
  return yaml::emit(yaml::from_json(document));
}

std::string render_objects(const std::vector<yaml::Node>& objects, OutputFormat format) {
  if (format == OutputFormat::Yaml) return yaml::emit_stream(objects);
  nlohmann::ordered_json list = {
      {"apiVersion", "v1"}, {"kind", "List"}, {"items", nlohmann::ordered_json::array()}};
  for (const yaml::Node& object : objects) list["items"].push_back(yaml::to_json(object));
  return list.dump(4) + "\n";
}

}  // namespace fluxop::cli
