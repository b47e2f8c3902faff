#include "core/yaml/json.h"

#include "core/yaml/budget.h"
#include "core/yaml/scalar.h"

namespace fluxop::yaml {

namespace {

nlohmann::ordered_json number_json(const std::string& canonical) {
  if (float_is_integral(canonical)) {
    if (auto value = parse_int(canonical)) return *value;
    return std::stoull(canonical);
  }
  return std::stod(canonical);
}

nlohmann::ordered_json json_of(const Node& node) {
  switch (node.kind()) {
    case Node::Kind::Null:
      return nullptr;
    case Node::Kind::Map: {
      auto obj = nlohmann::ordered_json::object();
      // Appended: a node's keys are unique already, and ordered_json's own
      // insertion searches the keys before it, quadratic in a map's size
      // (3 MiB of labels took 76 s).
      auto& entries = obj.get_ref<nlohmann::ordered_json::object_t&>();
      entries.reserve(node.entries().size());
      for (const auto& [key, value] : node.entries()) entries.emplace_back(key, json_of(value));
      return obj;
    }
    case Node::Kind::Sequence: {
      auto arr = nlohmann::ordered_json::array();
      for (const Node& item : node.items()) arr.push_back(json_of(item));
      return arr;
    }
    case Node::Kind::Scalar:
      switch (node.tag()) {
        case Tag::String:
          return node.text();
        case Tag::Bool:
          return canonical_text(node) == "true";
        case Tag::Timestamp:
          return canonical_text(node);
        case Tag::Int:
        case Tag::Float: {
          std::string canonical = canonical_text(node);
          if (canonical.find_first_of("in") != std::string::npos) return canonical;  // inf, nan
          return number_json(canonical);
        }
      }
  }
  return nullptr;
}

}  // namespace

nlohmann::ordered_json to_json(const Node& node) {
  // Pretty-printed, each value is indented by its depth: bounded, the text
  // grows with the values, not with their square.
  check_depth(node);
  return json_of(node);
}

nlohmann::json to_sorted_json(const Node& node) {
  return nlohmann::json::parse(to_json(node).dump());
}

Node from_json(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::json::value_t::object: {
      Node map = Node::map();
      for (const auto& [key, value] : json.items()) map.append(key, from_json(value));
      return map;
    }
    case nlohmann::json::value_t::array: {
      Node seq = Node::sequence();
      for (const auto& item : json) seq.push_back(from_json(item));
      return seq;
    }
    case nlohmann::json::value_t::string:
      return Node::string(json.get<std::string>());
    case nlohmann::json::value_t::boolean:
      return Node::boolean(json.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return Node::integer(json.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return Node::scalar(std::to_string(json.get<std::uint64_t>()), Tag::Int);
    case nlohmann::json::value_t::number_float:
      return Node::scalar(json.dump(), Tag::Float);
    default:
      return Node();
  }
}

}  // namespace fluxop::yaml
