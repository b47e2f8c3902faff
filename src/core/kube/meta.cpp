#include "core/kube/meta.h"

#include <algorithm>
#include <cctype>

namespace fluxop::kube {

using json = nlohmann::json;

const json* at(const json& object, std::string_view pointer) {
  // A pointer that is not one (no leading "/", a bad "~" escape) finds nothing.
  if (!pointer.empty() && pointer.front() != '/') return nullptr;
  json::json_pointer path;
  try {
    path = json::json_pointer(std::string(pointer));
  } catch (const json::exception&) {
    return nullptr;
  }
  return object.contains(path) ? &object.at(path) : nullptr;
}

std::optional<std::string> string_at(const json& object, std::string_view pointer) {
  const json* value = at(object, pointer);
  return value && value->is_string() ? std::optional(value->get<std::string>()) : std::nullopt;
}

std::string text_at(const json& object, std::string_view pointer) {
  return string_at(object, pointer).value_or("");
}

std::optional<std::int64_t> integer_at(const json& object, std::string_view pointer) {
  const json* value = at(object, pointer);
  return value && value->is_number_integer() ? std::optional(value->get<std::int64_t>())
                                             : std::nullopt;
}

bool true_at(const json& object, std::string_view pointer) {
  const json* value = at(object, pointer);
  return value && value->is_boolean() && value->get<bool>();
}

const json& array_at(const json& object, std::string_view pointer) {
  static const json empty = json::array();
  const json* value = at(object, pointer);
  return value && value->is_array() ? *value : empty;
}

std::map<std::string, std::string> string_map_at(const json& object, std::string_view pointer) {
  std::map<std::string, std::string> members;
  const json* value = at(object, pointer);
  if (!value || !value->is_object()) return members;
  for (const auto& [key, member] : value->items()) {
    if (member.is_string()) members[key] = member.get<std::string>();
  }
  return members;
}

std::string string_member(const json& object, std::string_view key) {
  if (!object.is_object()) return "";
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

const json* condition_at(const json& object, std::string_view type) {
  for (const json& condition : array_at(object, "/status/conditions"))
    if (string_member(condition, "type") == type) return &condition;
  return nullptr;
}

std::string pointer_token(std::string_view key) {
  std::string token;
  for (char c : key) {
    if (c == '~')
      token += "~0";
    else if (c == '/')
      token += "~1";
    else
      token += c;
  }
  return token;
}

bool equal_fold(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

bool annotation_is(const json& object, std::string_view key, std::string_view value) {
  const json* annotations = at(object, "/metadata/annotations");
  return annotations && equal_fold(string_member(*annotations, key), value);
}

bool any_in_metadata(const json& object, std::string_view key, std::string_view value) {
  const json* labels = at(object, "/metadata/labels");
  return (labels && equal_fold(string_member(*labels, key), value)) ||
         annotation_is(object, key, value);
}

}  // namespace fluxop::kube
