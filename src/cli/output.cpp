#include "cli/output.h"

#include <algorithm>

#include "core/error.h"
#include "core/yaml/budget.h"
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

namespace {

// The levels of `value`: a document from a peer is at most 256 deep
// (core/peer_json.h), so the recursion is bounded.
std::size_t depth_of(const nlohmann::ordered_json& value) {
  std::size_t deepest = 0;
  if (value.is_structured())
    for (const nlohmann::ordered_json& child : value) deepest = std::max(deepest, depth_of(child));
  return deepest + 1;
}

}  // namespace

std::string render_document(const nlohmann::ordered_json& document, OutputFormat format) {
  if (format == OutputFormat::Yaml) return yaml::emit(yaml::from_json(document));
  // As the YAML printer does (yaml/budget.h): indented JSON grows with the
  // square of the depth.
  if (depth_of(document) > yaml::kMaxDepth) throw Error(yaml::too_deep());
  return printable_json(document.dump(4)) + "\n";
}

std::string render_objects(const std::vector<yaml::Node>& objects, OutputFormat format) {
  if (format == OutputFormat::Yaml) return yaml::emit_stream(objects);
  nlohmann::ordered_json list = {
      {"apiVersion", "v1"}, {"kind", "List"}, {"items", nlohmann::ordered_json::array()}};
  for (const yaml::Node& object : objects) list["items"].push_back(yaml::to_json(object));
  return printable_json(list.dump(4)) + "\n";
}

}  // namespace fluxop::cli
