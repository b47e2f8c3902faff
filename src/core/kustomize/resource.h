// A Kubernetes object in a kustomize build, with the identity history that
// name references are resolved against.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/yaml/node.h"

namespace fluxop::kustomize {

struct Gvk {
  std::string group;
  std::string version;
  std::string kind;
  friend bool operator==(const Gvk&, const Gvk&) = default;
};

// Splits "group/version" (or "version" for the core group).
Gvk gvk_from(std::string_view api_version, std::string_view kind);

struct ResourceId {
  Gvk gvk;
  std::string name;
  std::string ns;
  friend bool operator==(const ResourceId&, const ResourceId&) = default;
  // "Kind/namespace/name" or "Kind/name", for messages.
  std::string to_string() const;
  // Equal for equal ids only, for hashing: no part holds a newline (kinds,
  // versions, names and namespaces are validated names).
  std::string key() const;
};

class Resource {
 public:
  // `origin` names where the object came from (a file path), for errors.
  Resource(yaml::Node object, std::string origin);

  const yaml::Node& object() const { return object_; }
  yaml::Node& object() { return object_; }
  const std::string& origin() const { return origin_; }

  std::string api_version() const { return object_.string_at({"apiVersion"}); }
  std::string kind() const { return object_.string_at({"kind"}); }
  std::string name() const { return object_.string_at({"metadata", "name"}); }
  std::string ns() const { return object_.string_at({"metadata", "namespace"}); }
  Gvk gvk() const { return gvk_from(api_version(), kind()); }
  ResourceId id() const { return {gvk(), name(), ns()}; }

  // Renames go through these so the previous id is remembered.
  void set_name(std::string_view name);
  void set_namespace(std::string_view ns);

  // Records the current id as a previous one without renaming, as
  // kustomize's namespace transformer does for every resource it visits.
  void remember_id();

  // Ids this resource had before renames, oldest first.
  const std::vector<ResourceId>& previous_ids() const { return previous_ids_; }
  // The id it was loaded with.
  ResourceId original_id() const;

  // The namePrefix and nameSuffix values applied to the name, innermost
  // kustomization first: they tell apart resources once of the same name.
  void add_name_prefix(std::string prefix) { name_prefixes_.push_back(std::move(prefix)); }
  void add_name_suffix(std::string suffix) { name_suffixes_.push_back(std::move(suffix)); }
  const std::vector<std::string>& name_prefixes() const { return name_prefixes_; }
  const std::vector<std::string>& name_suffixes() const { return name_suffixes_; }

 private:
  yaml::Node object_;
  std::string origin_;
  std::vector<ResourceId> previous_ids_;
  std::vector<std::string> name_prefixes_;
  std::vector<std::string> name_suffixes_;
};

using ResourceList = std::vector<Resource>;

}  // namespace fluxop::kustomize
