// Reading YAML into the object model: block-style YAML with our own reader
// (block_reader.h), everything else with yaml-cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/yaml/node.h"

namespace fluxop::yaml {

// Parses a multi-document stream. Empty documents come back as null nodes.
// Errors throw fluxop::Error as "source:line:col: message".
std::vector<Node> parse_documents(std::string_view text, std::string_view source);

// parse_documents without the fast reader in front (block_reader.h): what
// the differential tests compare it with.
std::vector<Node> parse_documents_with_yaml_cpp(std::string_view text, std::string_view source);

// Parses a stream that must hold exactly one (possibly empty) document.
Node parse_document(std::string_view text, std::string_view source);

// Reads a whole input file (a regular file of at most kMaxInputBytes:
// read_input_file); errors name the path.
std::string read_file(const std::string& path);

}  // namespace fluxop::yaml
