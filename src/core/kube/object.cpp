#include "core/kube/object.h"

namespace fluxop::kube {

using nlohmann::json;

namespace {

std::string string_at(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

ObjectKey object_key(const json& object) {
  ObjectKey key;
  std::string api_version = string_at(object, "apiVersion");
  std::size_t slash = api_version.find('/');
  key.group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  key.version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  key.kind = string_at(object, "kind");
  if (auto metadata = object.find("metadata"); metadata != object.end() && metadata->is_object()) {
    key.ns = string_at(*metadata, "namespace");
    key.name = string_at(*metadata, "name");
  }
  return key;
}

std::string display_name(const ObjectKey& key) {
  return key.kind + "/" + (key.ns.empty() ? "" : key.ns + "/") + key.name;
}

}  // namespace fluxop::kube
