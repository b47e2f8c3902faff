#include "cli/output.h"

#include <map>

#include "core/yaml/emit.h"
#include "core/yaml/json.h"

namespace fluxop::cli {

void add_output_flag(CLI::App& command, OutputFormat& format) {
  const std::map<std::string, OutputFormat> formats{{"yaml", OutputFormat::Yaml},
                                                    {"json", OutputFormat::Json}};
  command.add_option("-o,--output", format, "Output format: yaml or json")
      ->transform(CLI::CheckedTransformer(formats, CLI::ignore_case))
      ->default_str("yaml");
}

std::string render_objects(const std::vector<yaml::Node>& objects, OutputFormat format) {
  if (format == OutputFormat::Yaml) return yaml::emit_stream(objects);
  nlohmann::ordered_json list = {
      {"apiVersion", "v1"}, {"kind", "List"}, {"items", nlohmann::ordered_json::array()}};
  for (const yaml::Node& object : objects) list["items"].push_back(yaml::to_json(object));
  return list.dump(4) + "\n";
}

}  // namespace fluxop::cli
