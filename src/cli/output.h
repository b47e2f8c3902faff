// Printing objects the way kubectl does for `-o yaml|json`.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/yaml/node.h"

namespace fluxop::cli {

enum class OutputFormat { Yaml, Json };

// Adds `-o, --output yaml|json` to a command.
void add_output_flag(CLI::App& command, OutputFormat& format);

// One document (e.g. a command's report) as YAML or as indented JSON.
std::string render_document(const nlohmann::ordered_json& document, OutputFormat format);

// YAML: documents separated by "---". JSON: a v1 List of the objects.
std::string render_objects(const std::vector<yaml::Node>& objects, OutputFormat format);

}  // namespace fluxop::cli
