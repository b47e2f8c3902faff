#include "core/kustomize/resource.h"

#include <utility>

namespace fluxop::kustomize {

Gvk gvk_from(std::string_view api_version, std::string_view kind) {
  Gvk gvk;
  gvk.kind = std::string(kind);
  auto slash = api_version.find('/');
  if (slash == std::string_view::npos) {
    gvk.version = std::string(api_version);
  } else {
    gvk.group = std::string(api_version.substr(0, slash));
    gvk.version = std::string(api_version.substr(slash + 1));
  }
  return gvk;
}

std::string ResourceId::to_string() const {
  std::string out = gvk.kind;
  if (!ns.empty()) out += "/" + ns;
  out += "/" + name;
  return out;
}

std::string ResourceId::key() const {
  return gvk.group + "\n" + gvk.version + "\n" + gvk.kind + "\n" + ns + "\n" + name;
}

Resource::Resource(yaml::Node object, std::string origin)
    : object_(std::move(object)), origin_(std::move(origin)) {}

void Resource::remember_id() { previous_ids_.push_back(id()); }

void Resource::set_name(std::string_view name) {
  if (name == this->name()) return;
  remember_id();
  object_.get_or_insert("metadata", yaml::Node::map())
      .set("name", yaml::Node::string(std::string(name)));
}

void Resource::set_namespace(std::string_view ns) {
  if (ns == this->ns()) return;
  remember_id();
  object_.get_or_insert("metadata", yaml::Node::map())
      .set("namespace", yaml::Node::string(std::string(ns)));
}

ResourceId Resource::original_id() const {
  return previous_ids_.empty() ? id() : previous_ids_.front();
}

}  // namespace fluxop::kustomize
