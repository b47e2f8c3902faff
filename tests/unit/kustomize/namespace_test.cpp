#include "core/kustomize/namespace.h"

#include <doctest/doctest.h>

#include "support.h"

// Expected outputs are kubectl kustomize's (v5.5.0) for the same field and
// resources.

namespace fluxop::kustomize {
namespace {

using namespace testing;

const char* config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";

}  // namespace

TEST_CASE("namespace moves namespaced kinds, renames v1 Namespaces and fixes default subjects") {
  check_transform(transform_namespace, R"(apps
)",
                  R"(apiVersion: v1beta1
kind: Namespace
metadata:
  name: weird
---
apiVersion: v1
kind: Namespace
metadata:
  name: old
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crd
spec:
  conversion:
    webhook:
      clientConfig:
        service:
          name: s
          namespace: a
---
apiVersion: rbac.authorization.k8s.io/v1alpha1
kind: ClusterRole
metadata:
  name: cr
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb
  namespace: z
subjects:
- kind: ServiceAccount
  name: default
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb
subjects:
- kind: ServiceAccount
  name: default
  namespace: x
- kind: ServiceAccount
  name: other
  namespace: y
- kind: User
  name: default
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.x
spec:
  service:
    name: s
---
apiVersion: example.com/v1
kind: Thing
metadata:
  name: t
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata:
  name: fs
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: vwc
webhooks:
- clientConfig:
    service:
      name: svc
      namespace: a
)",
                  R"(apiVersion: v1beta1
kind: Namespace
metadata:
  name: weird
  namespace: apps
---
apiVersion: v1
kind: Namespace
metadata:
  name: apps
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crd
spec:
  conversion:
    webhook:
      clientConfig:
        service:
          name: s
          namespace: apps
---
apiVersion: rbac.authorization.k8s.io/v1alpha1
kind: ClusterRole
metadata:
  name: cr
  namespace: apps
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb
  namespace: apps
subjects:
- kind: ServiceAccount
  name: default
  namespace: apps
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb
subjects:
- kind: ServiceAccount
  name: default
  namespace: apps
- kind: ServiceAccount
  name: other
  namespace: "y"
- kind: User
  name: default
  namespace: apps
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.x
spec:
  service:
    name: s
    namespace: apps
---
apiVersion: example.com/v1
kind: Thing
metadata:
  name: t
  namespace: apps
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata:
  name: fs
  namespace: apps
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: vwc
webhooks:
- clientConfig:
    service:
      name: svc
      namespace: a
)");
}

TEST_CASE("namespace changes are remembered as previous ids") {
  ResourceList resources = load(R"(apiVersion: v1
kind: Namespace
metadata:
  name: old
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: config
  namespace: before
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: already
  namespace: apps
)");
  transform_namespace(resources, yaml::Node::string("apps"), kContext);
  CHECK(resources[0].original_id().name == "old");
  CHECK(resources[0].name() == "apps");
  CHECK(resources[1].original_id().ns == "before");
  CHECK(resources[1].ns() == "apps");
  // kustomize records the id of every resource it visits, moved or not.
  REQUIRE(resources[2].previous_ids().size() == 1);
  CHECK(resources[2].previous_ids()[0].ns == "apps");
  CHECK(resources[2].previous_ids()[0].name == "already");
}

TEST_CASE("an empty namespace changes nothing") {
  check_transform(transform_namespace, "", config_map, config_map);
  check_transform(transform_namespace, "\"\"", config_map, config_map);
}

TEST_CASE("namespace errors") {
  check_error(transform_namespace, "5", config_map,
              "kustomization.yaml: namespace: expected a string, found 5");
  check_error(transform_namespace, "[a]", config_map,
              "kustomization.yaml: namespace: expected a string, found a sequence");
  check_error(transform_namespace, "apps",
              "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: one\n---\napiVersion: v1\nkind: "
              "Namespace\nmetadata:\n  name: two\n",
              "kustomization.yaml: namespace: namespace transformation produces ID conflict: two "
              "resources are Namespace/apps");
  // Of several conflicts, the one of the first resource a later one repeats.
  check_error(transform_namespace, "apps",
              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: a}\n---\n"
              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\n---\n"
              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y, namespace: b}\n---\n"
              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: b}\n",
              "kustomization.yaml: namespace: namespace transformation produces ID conflict: two "
              "resources are ConfigMap/apps/x");
  check_error(transform_namespace, "apps",
              "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: "
              "v1.x\nspec:\n  service:\n    namespace: {a: b}\n",
              "kustomization.yaml: namespace: APIService/v1.x: spec/service/namespace: expected a "
              "string, found a map");
}

}  // namespace fluxop::kustomize
