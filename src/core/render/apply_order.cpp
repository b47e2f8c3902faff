#include "core/render/apply_order.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <tuple>

#include "core/kustomize/legacy_order.h"

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

auto sort_key(const Node& object) {
  std::string kind = object.string_at({"kind"});
  std::string group = kustomize::gvk_from(object.string_at({"apiVersion"}), kind).group;
  return std::make_tuple(kustomize::kind_rank(kind, kFirst, kLast), group, kind,
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
  // Keys computed once per object, not once per comparison.
  std::vector<std::pair<decltype(sort_key(Node())), std::size_t>> keys;
  keys.reserve(objects.size());
  for (std::size_t i = 0; i < objects.size(); ++i) keys.emplace_back(sort_key(objects[i]), i);
  std::sort(keys.begin(), keys.end());
  std::vector<Node> sorted;
  sorted.reserve(objects.size());
  for (const auto& [key, index] : keys) sorted.push_back(std::move(objects[index]));
  objects = std::move(sorted);
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
