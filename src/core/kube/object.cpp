#include "core/kube/object.h"

#include "core/kube/meta.h"

namespace fluxop::kube {

using nlohmann::json;

ObjectKey object_key(const json& object) {
  ObjectKey key;
  std::string api_version = string_member(object, "apiVersion");
  std::size_t slash = api_version.find('/');
  key.group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  key.version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  key.kind = string_member(object, "kind");
  if (auto metadata = object.find("metadata"); metadata != object.end() && metadata->is_object()) {
    key.ns = string_member(*metadata, "namespace");
    key.name = string_member(*metadata, "name");
  }
  return key;
}

bool is_flux_group(std::string_view group) {
  return group.ends_with(".toolkit.fluxcd.io") || group.ends_with(".extensions.fluxcd.io");
}

std::string display_name(const ObjectKey& key) {
  return key.kind + "/" + (key.ns.empty() ? "" : key.ns + "/") + key.name;
}

std::string api_version(const ObjectKey& key) {
  return key.group.empty() ? key.version : key.group + "/" + key.version;
}

}  // namespace fluxop::kube
