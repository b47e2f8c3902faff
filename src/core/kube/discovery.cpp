#include "core/kube/discovery.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/kube/answer.h"
#include "core/kube/client.h"
#include "core/kube/meta.h"

namespace fluxop::kube {

namespace {

using nlohmann::json;

// Aggregated discovery (v2 since Kubernetes 1.30, v2beta1 from 1.26), else
// the old documents; a server that knows neither answers with the latter.
constexpr std::string_view kAcceptAggregated =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json";

std::string mapping_key(std::string_view group, std::string_view version, std::string_view kind) {
  return std::string(group) + "/" + std::string(version) + "/" + std::string(kind);
}

std::string describe_kind(std::string_view group, std::string_view version, std::string_view kind) {
  std::string api_version =
      group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
  return "kind \"" + std::string(kind) + "\" of apiVersion \"" + api_version + "\"";
}

// group/version of "apps/v1" or "v1".
std::pair<std::string, std::string> split_group_version(const std::string& group_version) {
  std::size_t slash = group_version.find('/');
  if (slash == std::string::npos) return {"", group_version};
  return {group_version.substr(0, slash), group_version.substr(slash + 1)};
}

}  // namespace

std::string resource_path(const ResourceMapping& mapping, std::string_view ns,
                          std::string_view name, std::string_view subresource) {
  std::string path = mapping.group.empty() ? "/api/" + mapping.version
                                           : "/apis/" + mapping.group + "/" + mapping.version;
  if (mapping.namespaced && !ns.empty()) path += "/namespaces/" + std::string(ns);
  path += "/" + mapping.resource;
  if (!name.empty()) path += "/" + std::string(name);
  if (!subresource.empty()) path += "/" + std::string(subresource);
  return path;
}

std::optional<std::vector<ResourceMapping>> parse_aggregated_discovery(std::string_view request,
                                                                       std::string_view text) {
  json list = decode_answer(request, text);
  if (!list.is_object() || string_member(list, "kind") != "APIGroupDiscoveryList")
    return std::nullopt;
  std::vector<ResourceMapping> mappings;
  for (const json& group : array_at(list, "/items")) {
    std::string group_name;
    if (auto metadata = group.find("metadata"); metadata != group.end() && metadata->is_object())
      group_name = string_member(*metadata, "name");
    for (const json& version : array_at(group, "/versions")) {
      for (const json& resource : array_at(version, "/resources")) {
        auto kind = resource.find("responseKind");
        if (kind == resource.end() || !kind->is_object()) continue;
        mappings.push_back({group_name, string_member(version, "version"),
                            string_member(*kind, "kind"), string_member(resource, "resource"),
                            string_member(resource, "scope") == "Namespaced"});
      }
    }
  }
  return mappings;
}

std::vector<ResourceMapping> parse_resource_list(std::string_view request, std::string_view text) {
  json list = decode_answer(request, text);
  if (!list.is_object()) throw Error("not an APIResourceList");
  auto [group, version] = split_group_version(string_member(list, "groupVersion"));
  std::vector<ResourceMapping> mappings;
  for (const json& resource : array_at(list, "/resources")) {
    std::string name = string_member(resource, "name");
    if (name.empty() || name.find('/') != std::string::npos) continue;  // a subresource
    auto namespaced = resource.find("namespaced");
    mappings.push_back(
        {group, version, string_member(resource, "kind"), name,
         namespaced != resource.end() && namespaced->is_boolean() && namespaced->get<bool>()});
  }
  return mappings;
}

std::string RestMapper::get(const std::string& path, std::string_view accept) {
  ++requests_;
  Response response = client_.request("GET", path, "", "", "application/json", accept);
  if (!response.ok()) throw api_error("discovery " + path, response.status, response.body);
  return response.body;
}

void RestMapper::add_resource_list(const std::string& path) {
  for (ResourceMapping& mapping :
       parse_resource_list("GET " + path, get(path, "application/json"))) {
    add(std::move(mapping));
  }
}

void RestMapper::add(ResourceMapping mapping) {
  Key key = mapping_key(mapping.group, mapping.version, mapping.kind);
  if (mappings_.try_emplace(key, std::move(mapping)).second) order_.push_back(std::move(key));
}

// /api answered APIVersions, /apis an APIGroupList: then one request per
// group-version.
void RestMapper::load_legacy_group_versions(const std::string& path, std::string_view body) {
  json root = decode_answer("GET " + path, body);
  if (!root.is_object()) throw Error("discovery " + path + ": not JSON");
  if (path == "/api") {
    for (const json& version : array_at(root, "/versions")) {
      if (version.is_string()) add_resource_list("/api/" + version.get<std::string>());
    }
    return;
  }
  for (const json& group : array_at(root, "/groups")) {
    for (const json& version : array_at(group, "/versions")) {
      add_resource_list("/apis/" + string_member(version, "groupVersion"));
    }
  }
}

void RestMapper::load_aggregated_or_legacy(const std::string& path, const Response& response) {
  if (!response.ok()) throw api_error("discovery " + path, response.status, response.body);
  const std::string& body = response.body;
  if (std::optional<std::vector<ResourceMapping>> mappings =
          parse_aggregated_discovery("GET " + path, body)) {
    for (ResourceMapping& mapping : *mappings) add(std::move(mapping));
    return;
  }
  load_legacy_group_versions(path, body);  // the server ignored the aggregated types
}

void RestMapper::load() {
  mappings_.clear();
  order_.clear();
  missing_.clear();
  // Both roots together: one round trip.
  std::vector<Response> roots = client_.request_all(
      {{"GET", "/api", "", "", "application/json", std::string(kAcceptAggregated)},
       {"GET", "/apis", "", "", "application/json", std::string(kAcceptAggregated)}});
  requests_ += 2;
  load_aggregated_or_legacy("/api", roots[0]);
  load_aggregated_or_legacy("/apis", roots[1]);
  loaded_ = true;
}

std::vector<ResourceMapping> RestMapper::preferred_kinds(
    const std::function<bool(std::string_view group)>& in_group) {
  if (!loaded_) load();
  std::vector<ResourceMapping> kinds;
  std::set<std::string> seen;  // "group/kind"
  for (const Key& key : order_) {
    const ResourceMapping& mapping = mappings_.at(key);
    if (in_group(mapping.group) && seen.insert(mapping.group + "/" + mapping.kind).second)
      kinds.push_back(mapping);
  }
  return kinds;
}

void RestMapper::refresh() {
  loaded_ = false;
  missing_.clear();
}

std::optional<ResourceMapping> RestMapper::find(std::string_view group, std::string_view version,
                                                std::string_view kind) {
  Key key = mapping_key(group, version, kind);
  bool fresh = !loaded_;
  if (fresh) load();
  if (auto it = mappings_.find(key); it != mappings_.end()) return it->second;
  if (missing_.contains(key)) return std::nullopt;
  if (!fresh) load();
  if (auto it = mappings_.find(key); it != mappings_.end()) return it->second;
  missing_.insert(key);
  return std::nullopt;
}

const ResourceMapping& RestMapper::mapping(std::string_view group, std::string_view version,
                                           std::string_view kind) {
  if (!find(group, version, kind)) {
    throw Error("the API server has no " + describe_kind(group, version, kind) +
                (group.empty() || group.find('.') == std::string_view::npos
                     ? ""
                     : " (is its CustomResourceDefinition installed?)"));
  }
  return mappings_.at(mapping_key(group, version, kind));
}

}  // namespace fluxop::kube
