// The whole of a parsed Node tree as text, one node per line: kind, tag,
// style, null form, mark, keys in order and text. Node's operator== ignores
// marks, styles, null forms and key order; the differential tests of the
// fast block reader (block_reader_test.cpp, yaml_fuzz.cpp) must not.
#pragma once

#include <string>

#include "core/yaml/node.h"

namespace fluxop::testing {

inline void describe_tree(const yaml::Node& node, int depth, std::string& out) {
  out.append(static_cast<std::size_t>(depth) * 2, ' ');
  out += "@" + std::to_string(node.mark.line) + ":" + std::to_string(node.mark.column) + " ";
  switch (node.kind()) {
    case yaml::Node::Kind::Null:
      out += "null[" + node.null_form() + "]\n";
      return;
    case yaml::Node::Kind::Scalar:
      out += "scalar tag=" + std::to_string(static_cast<int>(node.tag())) +
             " style=" + std::to_string(static_cast<int>(node.style())) + " [";
      for (char c : node.text()) {
        if (c == '\n') {
          out += "\\n";
        } else {
          out += c;
        }
      }
      out += "]\n";
      return;
    case yaml::Node::Kind::Sequence:
      out += "sequence\n";
      for (const auto& item : node.items()) describe_tree(item, depth + 1, out);
      return;
    case yaml::Node::Kind::Map:
      out += "map\n";
      for (const auto& [key, value] : node.entries()) {
        out.append(static_cast<std::size_t>(depth + 1) * 2, ' ');
        out += "key[" + key + "]\n";
        describe_tree(value, depth + 2, out);
      }
      return;
  }
}

inline std::string describe_documents(const std::vector<yaml::Node>& documents) {
  std::string out = std::to_string(documents.size()) + " documents\n";
  for (const auto& document : documents) describe_tree(document, 0, out);
  return out;
}

}  // namespace fluxop::testing
