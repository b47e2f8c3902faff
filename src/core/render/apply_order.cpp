#include "core/render/apply_order.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <tuple>

namespace fluxop::render {

using yaml::Node;

namespace {

constexpr std::array<std::string_view, 23> kFirst = {"CustomResourceDefinition",
                                                     "Namespace",
                                                     "ClusterRole",
                                                     "ClusterClass",
                                                     "RuntimeClass",
                                                     "PriorityClass",
                                                     "StorageClass",
                                                     "VolumeSnapshotClass",
                                                     "IngressClass",
                                                     "GatewayClass",
                                                     "ClusterRoleBinding",
                                                     "ResourceQuota",
                                                     "ServiceAccount",
                                                     "Role",
                                                     "RoleBinding",
                                                     "ConfigMap",
                                                     "Secret",
                                                     "Service",
                                                     "LimitRange",
                                                     "Deployment",
                                                     "StatefulSet",
                                                     "CronJob",
                                                     "PodDisruptionBudget"};
constexpr std::array<std::string_view, 2> kLast = {"MutatingWebhookConfiguration",
                                                   "ValidatingWebhookConfiguration"};

// Negative for the first kinds, 0 for the others, positive for the last.
int kind_rank(std::string_view kind) {
  auto first = std::find(kFirst.begin(), kFirst.end(), kind);
  if (first != kFirst.end()) return static_cast<int>(first - kFirst.begin()) - int(kFirst.size());
  auto last = std::find(kLast.begin(), kLast.end(), kind);
  if (last != kLast.end()) return static_cast<int>(last - kLast.begin()) + 1;
  return 0;
}

std::string group_of(const Node& object) {
  std::string api_version = object.string_at({"apiVersion"});
  std::size_t slash = api_version.find('/');
  return slash == std::string::npos ? "" : api_version.substr(0, slash);
}

auto sort_key(const Node& object) {
  std::string kind = object.string_at({"kind"});
  return std::make_tuple(kind_rank(kind), group_of(object), kind,
                         object.string_at({"metadata", "namespace"}),
                         object.string_at({"metadata", "name"}));
}

void merge_into(Node& metadata, std::string_view field, const instance::StringMap& values) {
  if (values.empty()) return;
  Node* map = metadata.get(field);
  if (!map || !map->is_map()) map = &metadata.set(field, Node::map());
  for (const auto& [key, value] : values) map->set(key, Node::string(value));
}

}  // namespace

void sort_for_apply(std::vector<Node>& objects) {
  std::stable_sort(objects.begin(), objects.end(),
                   [](const Node& a, const Node& b) { return sort_key(a) < sort_key(b); });
}

void set_metadata(std::vector<Node>& objects, const instance::StringMap& labels,
                  const instance::StringMap& annotations) {
  for (Node& object : objects) {
    Node& metadata = object.get_or_insert("metadata", Node::map());
    merge_into(metadata, "labels", labels);
    merge_into(metadata, "annotations", annotations);
  }
}

}  // namespace fluxop::render
