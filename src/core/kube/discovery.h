// The REST mapper: which resource (plural) serves a group/version/kind and
// whether it is namespaced, learnt from the API server's discovery (the
// aggregated documents at /api and /apis, one request each; the per
// group-version lists on servers without them), and the URL paths of objects.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fluxop::kube {

class KubeClient;
struct Response;

struct ResourceMapping {
  std::string group;  // "" for the core group
  std::string version;
  std::string kind;
  std::string resource;  // "deployments"
  bool namespaced = true;
};

// "/api/v1/namespaces/NS/configmaps/NAME", "/apis/GROUP/VERSION/RESOURCE/NAME"
// for cluster-scoped kinds (and for namespaced ones when `ns` is empty: all
// namespaces); without NAME for the collection; "/SUBRESOURCE" appended.
std::string resource_path(const ResourceMapping& mapping, std::string_view ns,
                          std::string_view name = {}, std::string_view subresource = {});

// The mappings in an aggregated discovery document (APIGroupDiscoveryList,
// apidiscovery.k8s.io v2 or v2beta1); nullopt when `json` is not one.
// Both throw fluxop::Error naming `request` ("GET /apis") when `json` is not
// JSON or exceeds the bounds of an answer (answer.h).
std::optional<std::vector<ResourceMapping>> parse_aggregated_discovery(std::string_view request,
                                                                       std::string_view json);

// The mappings in an APIResourceList (/api/v1, /apis/GROUP/VERSION).
std::vector<ResourceMapping> parse_resource_list(std::string_view request, std::string_view json);

class RestMapper {
 public:
  explicit RestMapper(KubeClient& client) : client_(client) {}

  // The mapping of a kind. An unknown kind makes discovery be asked again
  // once (a CRD may just have been created); still unknown, it throws
  // fluxop::Error naming the kind.
  const ResourceMapping& mapping(std::string_view group, std::string_view version,
                                 std::string_view kind);
  // The same, nullopt instead of the error.
  std::optional<ResourceMapping> find(std::string_view group, std::string_view version,
                                      std::string_view kind);
  // The kinds served in the groups `in_group` accepts, each once, in its
  // preferred version (the first the server lists).
  std::vector<ResourceMapping> preferred_kinds(
      const std::function<bool(std::string_view group)>& in_group);
  // Forgets discovery: the next lookup asks the server again.
  void refresh();

  // Discovery requests made so far.
  int discovery_requests() const { return requests_; }

 private:
  using Key = std::string;  // "group/version/kind"
  void load();
  void load_aggregated_or_legacy(const std::string& path, const Response& response);
  void load_legacy_group_versions(const std::string& path, std::string_view body);
  void add_resource_list(const std::string& path);
  std::string get(const std::string& path, std::string_view accept);

  KubeClient& client_;
  bool loaded_ = false;
  void add(ResourceMapping mapping);

  std::map<Key, ResourceMapping> mappings_;
  std::vector<Key> order_;  // the mappings as the server listed them: preferred versions first
  std::set<Key> missing_;   // unknown even after a refresh, until the next refresh()
  int requests_ = 0;
};

}  // namespace fluxop::kube
