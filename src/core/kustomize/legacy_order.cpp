#include "core/kustomize/legacy_order.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace fluxop::kustomize {

namespace {

constexpr std::array<std::string_view, 22> kOrderFirst = {"Namespace",
                                                          "ResourceQuota",
                                                          "StorageClass",
                                                          "CustomResourceDefinition",
                                                          "ServiceAccount",
                                                          "PodSecurityPolicy",
                                                          "Role",
                                                          "ClusterRole",
                                                          "RoleBinding",
                                                          "ClusterRoleBinding",
                                                          "ConfigMap",
                                                          "Secret",
                                                          "Endpoints",
                                                          "Service",
                                                          "LimitRange",
                                                          "PriorityClass",
                                                          "PersistentVolume",
                                                          "PersistentVolumeClaim",
                                                          "Deployment",
                                                          "StatefulSet",
                                                          "CronJob",
                                                          "PodDisruptionBudget"};
constexpr std::array<std::string_view, 2> kOrderLast = {"MutatingWebhookConfiguration",
                                                        "ValidatingWebhookConfiguration"};

std::string or_placeholder(const std::string& value, std::string_view placeholder) {
  return value.empty() ? std::string(placeholder) : value;
}

std::string gvk_sort_key(const Gvk& gvk) {
  return or_placeholder(gvk.group, "~G") + "_" + or_placeholder(gvk.version, "~V") + "_" +
         or_placeholder(gvk.kind, "~K");
}

bool gvk_less(const Gvk& a, const Gvk& b) {
  int ra = kind_rank(a.kind, kOrderFirst, kOrderLast);
  int rb = kind_rank(b.kind, kOrderFirst, kOrderLast);
  if (ra != rb) return ra < rb;
  // kustomize puts core-group Namespaces after namespaces of other groups.
  if (a.kind == "Namespace" && b.kind == "Namespace" && (a.group.empty() || b.group.empty())) {
    return gvk_sort_key(a) > gvk_sort_key(b);
  }
  return gvk_sort_key(a) < gvk_sort_key(b);
}

struct SortKey {
  Gvk gvk;
  std::string ns;
  std::string name;
};

bool key_less(const SortKey& a, const SortKey& b) {
  if (!(a.gvk == b.gvk)) return gvk_less(a.gvk, b.gvk);
  if (a.ns != b.ns) return a.ns < b.ns;
  return a.name < b.name;
}

}  // namespace

int kind_rank(std::string_view kind, std::span<const std::string_view> first,
              std::span<const std::string_view> last) {
  auto in_first = std::find(first.begin(), first.end(), kind);
  if (in_first != first.end()) {
    return static_cast<int>(in_first - first.begin()) - static_cast<int>(first.size());
  }
  auto in_last = std::find(last.begin(), last.end(), kind);
  if (in_last != last.end()) return static_cast<int>(in_last - last.begin()) + 1;
  return 0;
}

void sort_legacy(ResourceList& resources) {
  std::vector<std::pair<SortKey, std::size_t>> keys;
  keys.reserve(resources.size());
  for (std::size_t i = 0; i < resources.size(); ++i) {
    const Resource& r = resources[i];
    keys.push_back({{r.gvk(), or_placeholder(r.ns(), "~X"), or_placeholder(r.name(), "~N")}, i});
  }
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& a, const auto& b) { return key_less(a.first, b.first); });
  ResourceList sorted;
  sorted.reserve(resources.size());
  for (const auto& [key, index] : keys) sorted.push_back(std::move(resources[index]));
  resources = std::move(sorted);
}

}  // namespace fluxop::kustomize
