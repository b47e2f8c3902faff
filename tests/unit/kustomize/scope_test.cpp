#include "core/kustomize/scope.h"

#include <doctest/doctest.h>

namespace fluxop::kustomize {

TEST_CASE("cluster-scoped kinds are known by group, version and kind") {
  CHECK(is_cluster_scoped({"", "v1", "Namespace"}));
  CHECK(is_cluster_scoped({"", "v1", "PersistentVolume"}));
  CHECK(is_cluster_scoped({"rbac.authorization.k8s.io", "v1", "ClusterRoleBinding"}));
  CHECK(is_cluster_scoped({"apiextensions.k8s.io", "v1", "CustomResourceDefinition"}));
  CHECK(is_cluster_scoped({"storage.k8s.io", "v1beta1", "StorageClass"}));
  CHECK(is_cluster_scoped({"flowcontrol.apiserver.k8s.io", "v1beta1", "FlowSchema"}));
}

TEST_CASE("everything else is namespaced, as kustomize assumes") {
  CHECK_FALSE(is_cluster_scoped({"", "v1", "ConfigMap"}));
  CHECK_FALSE(is_cluster_scoped({"rbac.authorization.k8s.io", "v1", "RoleBinding"}));
  // Same kind in another group, or an API version kustomize's schema lacks.
  CHECK_FALSE(is_cluster_scoped({"example.com", "v1", "Namespace"}));
  CHECK_FALSE(is_cluster_scoped({"", "v1beta1", "Namespace"}));
  CHECK_FALSE(is_cluster_scoped({"flowcontrol.apiserver.k8s.io", "v1", "FlowSchema"}));
  CHECK_FALSE(is_cluster_scoped({"rbac.authorization.k8s.io", "v1alpha1", "ClusterRole"}));
  CHECK_FALSE(is_cluster_scoped({"", "", "Namespace"}));
  CHECK_FALSE(is_cluster_scoped({"kustomize.toolkit.fluxcd.io", "v1", "Kustomization"}));
}

}  // namespace fluxop::kustomize
