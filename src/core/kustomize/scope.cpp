#include "core/kustomize/scope.h"

#include <algorithm>
#include <string_view>

namespace fluxop::kustomize {

namespace {

struct ClusterKind {
  std::string_view group;
  std::string_view kind;
  std::string_view versions[2];  // unused slots stay empty
};

// kustomize's schema predates some API versions (flowcontrol v1, rbac
// v1alpha1...): it treats those as namespaced, and so do we.
constexpr ClusterKind cluster_kinds[] = {
    {"", "ComponentStatus", {"v1"}},
    {"", "Namespace", {"v1"}},
    {"", "Node", {"v1"}},
    {"", "NodeProxyOptions", {"v1"}},
    {"", "PersistentVolume", {"v1"}},
    {"admissionregistration.k8s.io", "MutatingWebhookConfiguration", {"v1", "v1beta1"}},
    {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", {"v1", "v1beta1"}},
    {"apiextensions.k8s.io", "CustomResourceDefinition", {"v1", "v1beta1"}},
    {"apiregistration.k8s.io", "APIService", {"v1", "v1beta1"}},
    {"certificates.k8s.io", "CertificateSigningRequest", {"v1", "v1beta1"}},
    {"flowcontrol.apiserver.k8s.io", "FlowSchema", {"v1beta1"}},
    {"flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration", {"v1beta1"}},
    {"networking.k8s.io", "IngressClass", {"v1", "v1beta1"}},
    {"node.k8s.io", "RuntimeClass", {"v1", "v1beta1"}},
    {"policy", "PodSecurityPolicy", {"v1beta1"}},
    {"rbac.authorization.k8s.io", "ClusterRole", {"v1", "v1beta1"}},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding", {"v1", "v1beta1"}},
    {"scheduling.k8s.io", "PriorityClass", {"v1", "v1beta1"}},
    {"storage.k8s.io", "CSIDriver", {"v1", "v1beta1"}},
    {"storage.k8s.io", "CSINode", {"v1", "v1beta1"}},
    {"storage.k8s.io", "StorageClass", {"v1", "v1beta1"}},
    {"storage.k8s.io", "VolumeAttachment", {"v1", "v1beta1"}},
};

}  // namespace

bool is_cluster_scoped(const Gvk& gvk) {
  return std::any_of(std::begin(cluster_kinds), std::end(cluster_kinds), [&](const auto& entry) {
    return entry.group == gvk.group && entry.kind == gvk.kind && !gvk.version.empty() &&
           std::find(std::begin(entry.versions), std::end(entry.versions), gvk.version) !=
               std::end(entry.versions);
  });
}

}  // namespace fluxop::kustomize
