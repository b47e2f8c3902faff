#include "core/kustomize/name_reference.h"

#include <doctest/doctest.h>

#include "core/kustomize/name_affix.h"
#include "core/kustomize/scope.h"
#include "support.h"

namespace fluxop::kustomize {
namespace {

using yaml::Node;
using namespace testing;

// What a kustomization with these namePrefix and nameSuffix fields makes of
// the resources, before references are fixed.
ResourceList renamed(std::string_view text, const char* prefix, const char* suffix = "") {
  ResourceList resources = load(text);
  transform_name_prefix(resources, Node::string(prefix), kContext);
  transform_name_suffix(resources, Node::string(suffix), kContext);
  return resources;
}

ResourceList joined(ResourceList a, const ResourceList& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const Resource& find(const ResourceList& resources, std::string_view kind, std::string_view ns,
                     std::string_view name) {
  for (const auto& r : resources) {
    if (r.kind() == kind && r.ns() == ns && r.name() == name) return r;
  }
  FAIL("no " << kind << " " << ns << "/" << name);
  throw;
}

// Compares with `kubectl kustomize` output, which orders resources its own
// way: each expected object against the resource of the same id.
void check_same(const ResourceList& resources, std::string_view expected) {
  std::vector<Node> objects = yaml::parse_documents(expected, "expected.yaml");
  REQUIRE(objects.size() == resources.size());
  for (const auto& object : objects) {
    Resource want(object, "expected.yaml");
    CHECK(yaml::emit(find(resources, want.kind(), want.ns(), want.name()).object()) ==
          yaml::emit(object));
  }
}

std::string envfrom_name(const Resource& pod) {
  const Node& container = pod.object().find({"spec"})->get("containers")->items()[0];
  return container.get("envFrom")->items()[0].string_at({"configMapRef", "name"});
}

// One resource of each referring field family, and references to names the
// build does not hold.
constexpr const char* families = R"(
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
---
apiVersion: v1
kind: Secret
metadata:
  name: sec
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: pvc
spec:
  storageClassName: fast
  volumeName: pv
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv
spec:
  storageClassName: fast
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
parameters:
  secretName: sec
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
---
apiVersion: v1
kind: Service
metadata:
  name: svc
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      serviceAccountName: sa
      priorityClassName: high
      imagePullSecrets:
      - name: sec
      - name: external
      initContainers:
      - name: init
        envFrom:
        - configMapRef:
            name: cm
        - secretRef:
            name: sec
      containers:
      - name: app
        env:
        - name: A
          valueFrom:
            configMapKeyRef:
              name: cm
              key: a
        - name: B
          valueFrom:
            secretKeyRef:
              name: sec
              key: b
        - name: C
          valueFrom:
            configMapKeyRef:
              name: not-in-build
              key: c
      volumes:
      - name: v1
        configMap:
          name: cm
      - name: v2
        secret:
          secretName: sec
      - name: v3
        persistentVolumeClaim:
          claimName: pvc
      - name: v4
        projected:
          sources:
          - configMap:
              name: cm
          - secret:
              name: sec
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: cron
spec:
  jobTemplate:
    spec:
      template:
        spec:
          serviceAccountName: sa
          containers:
          - name: c
            envFrom:
            - configMapRef:
                name: cm
          volumes:
          - name: data
            persistentVolumeClaim:
              claimName: pvc
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: svc
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      storageClassName: fast
  template:
    spec:
      serviceAccountName: sa
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: hpa
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ing
  annotations:
    nginx.ingress.kubernetes.io/auth-secret: sec
spec:
  tls:
  - secretName: sec
  defaultBackend:
    service:
      name: svc
  rules:
  - http:
      paths:
      - backend:
          service:
            name: svc
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: vwc
webhooks:
- name: check.example.com
  clientConfig:
    service:
      name: svc
      namespace: default
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
rules:
- resourceNames: [cm, sec, other]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: reader
subjects:
- kind: ServiceAccount
  name: sa
)";

// `kubectl kustomize` of `families` with `namePrefix: p-` and `nameSuffix: -s`.
constexpr const char* families_fixed = R"(
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: p-fast-s
parameters:
  secretName: p-sec-s
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: p-sa-s
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: p-reader-s
rules:
- resourceNames:
  - p-cm-s
  - p-sec-s
  - other
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: p-rb-s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: p-reader-s
subjects:
- kind: ServiceAccount
  name: p-sa-s
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: p-cm-s
---
apiVersion: v1
kind: Secret
metadata:
  name: p-sec-s
---
apiVersion: v1
kind: Service
metadata:
  name: p-svc-s
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: p-high-s
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: p-pv-s
spec:
  storageClassName: p-fast-s
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: p-pvc-s
spec:
  storageClassName: p-fast-s
  volumeName: p-pv-s
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: p-web-s
spec:
  template:
    spec:
      containers:
      - env:
        - name: A
          valueFrom:
            configMapKeyRef:
              key: a
              name: p-cm-s
        - name: B
          valueFrom:
            secretKeyRef:
              key: b
              name: p-sec-s
        - name: C
          valueFrom:
            configMapKeyRef:
              key: c
              name: not-in-build
        name: app
      imagePullSecrets:
      - name: p-sec-s
      - name: external
      initContainers:
      - envFrom:
        - configMapRef:
            name: p-cm-s
        - secretRef:
            name: p-sec-s
        name: init
      priorityClassName: p-high-s
      serviceAccountName: p-sa-s
      volumes:
      - configMap:
          name: p-cm-s
        name: v1
      - name: v2
        secret:
          secretName: p-sec-s
      - name: v3
        persistentVolumeClaim:
          claimName: p-pvc-s
      - name: v4
        projected:
          sources:
          - configMap:
              name: p-cm-s
          - secret:
              name: p-sec-s
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: p-db-s
spec:
  serviceName: p-svc-s
  template:
    spec:
      serviceAccountName: p-sa-s
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      storageClassName: p-fast-s
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: p-cron-s
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - envFrom:
            - configMapRef:
                name: p-cm-s
            name: c
          serviceAccountName: p-sa-s
          volumes:
          - name: data
            persistentVolumeClaim:
              claimName: p-pvc-s
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: p-hpa-s
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: p-web-s
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  annotations:
    nginx.ingress.kubernetes.io/auth-secret: p-sec-s
  name: p-ing-s
spec:
  defaultBackend:
    service:
      name: p-svc-s
  rules:
  - http:
      paths:
      - backend:
          service:
            name: p-svc-s
  tls:
  - secretName: p-sec-s
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: p-vwc-s
webhooks:
- clientConfig:
    service:
      name: p-svc-s
      namespace: default
  name: check.example.com
)";

TEST_CASE("references in every referrer field family follow renames") {
  ResourceList resources = renamed(families, "p-", "-s");
  fix_name_references(resources);
  check_same(resources, families_fixed);
}

TEST_CASE("nothing changes when nothing was renamed") {
  ResourceList resources = load(families);
  fix_name_references(resources);
  check_same(resources, families);
}

TEST_CASE("an IngressClass reference is left alone, as kustomize's table never matches it") {
  ResourceList resources = renamed(R"(
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ic}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ing}
spec: {ingressClassName: ic}
)",
                                   "p-");
  fix_name_references(resources);
  CHECK(resources[1].object().string_at({"spec", "ingressClassName"}) == "ic");
}

constexpr const char* base = R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
---
apiVersion: v1
kind: Pod
metadata: {name: pod}
spec:
  containers:
  - name: c
    envFrom:
    - configMapRef: {name: cm}
)";

TEST_CASE("a reference follows the old name, not a resource that now has it") {
  // An overlay of a prefixed base that adds its own ConfigMap "cm".
  ResourceList resources =
      joined(renamed(base, "a-"), load("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"));
  fix_name_references(resources);
  CHECK(envfrom_name(resources[1]) == "a-cm");
}

TEST_CASE("prefixes tell apart resources once of the same name") {
  // Two overlays prefix the same base and a top kustomization joins them;
  // its own Pod matches both ConfigMaps leniently and neither strictly.
  constexpr const char* top_pod = R"(
apiVersion: v1
kind: Pod
metadata: {name: top-pod}
spec:
  containers:
  - name: c
    envFrom:
    - configMapRef: {name: cm}
)";
  ResourceList resources = joined(joined(renamed(base, "a-"), renamed(base, "b-")), load(top_pod));
  fix_name_references(resources);
  // As `kubectl kustomize` renders it.
  CHECK(envfrom_name(resources[1]) == "a-cm");
  CHECK(envfrom_name(resources[3]) == "b-cm");
  CHECK(envfrom_name(resources[4]) == "cm");
}

TEST_CASE("outer prefixes and suffixes must agree, inner ones may differ") {
  ResourceList a = renamed(base, "a-", "-x");
  ResourceList b = renamed(base, "b-", "-x");
  ResourceList resources = joined(a, b);
  transform_name_prefix(resources, Node::string("t-"), kContext);
  fix_name_references(resources);
  CHECK(envfrom_name(resources[1]) == "t-a-cm-x");
  CHECK(envfrom_name(resources[3]) == "t-b-cm-x");
  CHECK(resources[0].name_prefixes() == std::vector<std::string>{"a-", "t-"});
  CHECK(resources[0].name_suffixes() == std::vector<std::string>{"-x"});
}

// Copies of `base` through every path of a diamond `depth` levels deep,
// each level's two sides renamed by `rename` ("l"/"r" as a prefix or a
// suffix), as kustomize accumulates them.
template <typename Rename>
ResourceList diamond(int depth, Rename rename) {
  ResourceList copies = load(base);
  for (int level = 0; level < depth; ++level) {
    ResourceList left = copies;
    ResourceList right = copies;
    rename(left, "l");
    rename(right, "r");
    copies = joined(std::move(left), right);
  }
  return copies;
}

TEST_CASE("among many copies of a base, each reference finds its own copy by its affixes") {
  SUBCASE("prefixes") {
    ResourceList resources = diamond(5, [](ResourceList& copies, const std::string& side) {
      transform_name_prefix(copies, Node::string(side + "-"), kContext);
    });
    fix_name_references(resources);
    REQUIRE(resources.size() == 64);
    CHECK(envfrom_name(resources[1]) == "l-l-l-l-l-cm");
    CHECK(envfrom_name(resources[43]) == "r-l-r-l-r-cm");
  }
  SUBCASE("suffixes, with no prefix to tell them apart") {
    ResourceList resources = diamond(5, [](ResourceList& copies, const std::string& side) {
      transform_name_suffix(copies, Node::string("-" + side), kContext);
    });
    fix_name_references(resources);
    CHECK(envfrom_name(resources[43]) == "cm-r-l-r-l-r");
  }
}

TEST_CASE("an object of the base's name beside its copies agrees with those of its outer affixes") {
  // A top kustomization (prefix t-) holds copies of the base (inner
  // prefixes a- and b-) and a ConfigMap "cm" of its own: the copies' Pods
  // (prefixes [a-, t-]) agree strictly with their own copy and with the top
  // ConfigMap ([t-] ends theirs), which have different names.
  ResourceList resources = joined(joined(renamed(base, "a-"), renamed(base, "b-")),
                                  load("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"));
  transform_name_prefix(resources, Node::string("t-"), kContext);
  CHECK_THROWS_WITH_AS(fix_name_references(resources),
                       "Pod/t-a-pod: spec/containers/envFrom/configMapRef/name: \"cm\" may "
                       "refer to several resources: ConfigMap/t-a-cm, ConfigMap/t-cm",
                       Error);
}

TEST_CASE("a referrer outside the copies agrees with every copy its outer prefixes end") {
  // The top Pod's prefixes [t-] end both copies' [a-, t-] and [b-, t-].
  constexpr const char* top_pod = R"(
apiVersion: v1
kind: Pod
metadata: {name: top-pod}
spec:
  containers:
  - name: c
    envFrom:
    - configMapRef: {name: cm}
)";
  ResourceList resources = joined(joined(renamed(base, "a-"), renamed(base, "b-")), load(top_pod));
  transform_name_prefix(resources, Node::string("t-"), kContext);
  CHECK_THROWS_WITH_AS(fix_name_references(resources),
                       "Pod/t-top-pod: spec/containers/envFrom/configMapRef/name: \"cm\" may "
                       "refer to several resources: ConfigMap/t-a-cm, ConfigMap/t-b-cm",
                       Error);
}

TEST_CASE("a namespaced referrer sees only its namespace and cluster-scoped resources") {
  // `kubectl kustomize` of these with `namePrefix: p-`.
  ResourceList resources = renamed(R"(
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: a
---
apiVersion: v1
kind: Pod
metadata:
  name: same-ns
  namespace: a
spec:
  containers:
  - name: c
    envFrom:
    - configMapRef:
        name: cm
---
apiVersion: v1
kind: Pod
metadata:
  name: other-ns
  namespace: b
spec:
  containers:
  - name: c
    envFrom:
    - configMapRef:
        name: cm
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cr
rules:
- resourceNames: [cm]
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa
  namespace: b
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb
  namespace: a
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cr
subjects:
- kind: ServiceAccount
  name: sa
  namespace: b
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
  namespace: c
rules:
- resourceNames: [cm]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb2
  namespace: c
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: reader
subjects:
- kind: ServiceAccount
  name: sa
  namespace: a
)",
                                   "p-");
  fix_name_references(resources);
  check_same(resources, R"(
apiVersion: v1
kind: ServiceAccount
metadata:
  name: p-sa
  namespace: b
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: p-reader
  namespace: c
rules:
- resourceNames:
  - cm
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: p-cr
rules:
- resourceNames:
  - p-cm
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: p-rb
  namespace: a
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: p-cr
subjects:
- kind: ServiceAccount
  name: p-sa
  namespace: b
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: p-rb2
  namespace: c
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: p-reader
subjects:
- kind: ServiceAccount
  name: sa
  namespace: a
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: p-cm
  namespace: a
---
apiVersion: v1
kind: Pod
metadata:
  name: p-same-ns
  namespace: a
spec:
  containers:
  - envFrom:
    - configMapRef:
        name: p-cm
    name: c
---
apiVersion: v1
kind: Pod
metadata:
  name: p-other-ns
  namespace: b
spec:
  containers:
  - envFrom:
    - configMapRef:
        name: cm
    name: c
)");
}

TEST_CASE("subjects take the namespace of the ServiceAccount they name") {
  // A base with `namePrefix: p-` under an overlay with `namespace: ovns`.
  ResourceList resources = renamed(R"(
apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa2
  namespace: other
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: role
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: role
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: role
subjects:
- kind: ServiceAccount
  name: sa
- kind: User
  name: sa
- kind: ServiceAccount
  name: sa2
  namespace: other
- kind: ServiceAccount
  name: sa
  namespace: default
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: role
subjects:
- kind: ServiceAccount
  name: sa
  namespace: default
- kind: ServiceAccount
  name: sa2
)",
                                   "p-");
  for (auto& r : resources) {
    if (!is_cluster_scoped(r.gvk())) r.set_namespace("ovns");
  }
  fix_name_references(resources);
  // `kubectl kustomize` of the overlay; the User subject named like the
  // ServiceAccount is rewritten too, as kustomize does not look at a
  // subject's kind.
  check_same(resources, R"(
apiVersion: v1
kind: ServiceAccount
metadata:
  name: p-sa
  namespace: ovns
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: p-sa2
  namespace: ovns
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: p-role
  namespace: ovns
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: p-role
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: p-rb
  namespace: ovns
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: p-role
subjects:
- kind: ServiceAccount
  name: p-sa
  namespace: ovns
- kind: User
  name: p-sa
  namespace: ovns
- kind: ServiceAccount
  name: p-sa2
  namespace: ovns
- kind: ServiceAccount
  name: p-sa
  namespace: ovns
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: p-crb
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: p-role
subjects:
- kind: ServiceAccount
  name: p-sa
  namespace: ovns
- kind: ServiceAccount
  name: p-sa2
  namespace: ovns
)");
}

TEST_CASE("a map's namespace matches where its target was, else where it is now") {
  ResourceList resources = renamed(R"(
apiVersion: v1
kind: Service
metadata: {name: hook, namespace: webhooks}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kubelet, namespace: kube-system}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: mwc}
webhooks:
- name: old.example.com
  clientConfig:
    service: {name: hook, namespace: webhooks, path: /mutate}
- name: new.example.com
  clientConfig:
    service: {name: hook, namespace: sys}
- name: elsewhere.example.com
  clientConfig:
    service: {name: hook, namespace: other}
- name: url.example.com
  clientConfig: {url: "https://x"}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
spec:
  configSource:
    configMap: {name: kubelet, namespace: kube-system, kubeletConfigKey: kubelet}
)",
                                   "x-");
  resources[0].set_namespace("sys");
  resources[1].set_namespace("sys");
  fix_name_references(resources);
  // As `kubectl kustomize` renders it with `namespace: sys`, but for the
  // namespace transformer's own changes.
  check_same(resources, R"(
apiVersion: v1
kind: Service
metadata: {name: x-hook, namespace: sys}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: x-kubelet, namespace: sys}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: x-mwc}
webhooks:
- name: old.example.com
  clientConfig:
    service: {name: x-hook, namespace: sys, path: /mutate}
- name: new.example.com
  clientConfig:
    service: {name: x-hook, namespace: sys}
- name: elsewhere.example.com
  clientConfig:
    service: {name: hook, namespace: other}
- name: url.example.com
  clientConfig: {url: "https://x"}
---
apiVersion: v1
kind: Node
metadata: {name: x-n1}
spec:
  configSource:
    configMap: {name: x-kubelet, namespace: sys, kubeletConfigKey: kubelet}
)");
}

TEST_CASE("a roleRef chooses between a Role and a ClusterRole once of the same name") {
  constexpr const char* binding = R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: role}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: rb}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: KIND, name: role}
)";
  for (auto [kind, expected] : {std::pair{"ClusterRole", "b-role"}, std::pair{"Role", "a-role"}}) {
    std::string text = binding;
    text.replace(text.find("KIND"), 4, kind);
    ResourceList resources = joined(
        renamed("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: role}\n",
                "a-"),
        renamed(text, "b-"));
    fix_name_references(resources);
    CHECK(resources[2].object().string_at({"roleRef", "name"}) == expected);
  }
}

constexpr const char* two_namespaces = R"(
apiVersion: v1
kind: ServiceAccount
metadata: {name: sa, namespace: a}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: sa, namespace: b}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: b}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: cr}
rules:
- resourceNames: [cm, sa]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: crb}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cr}
subjects:
- {kind: ServiceAccount, name: sa, namespace: b}
)";

TEST_CASE("candidates that agree on the new name are not ambiguous") {
  ResourceList resources = renamed(two_namespaces, "p-");
  fix_name_references(resources);
  // As `kubectl kustomize` renders it: both ConfigMaps are now "p-cm";
  // the subject's namespace picks one ServiceAccount.
  check_same(resources, R"(
apiVersion: v1
kind: ServiceAccount
metadata: {name: p-sa, namespace: a}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: p-sa, namespace: b}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: p-cm, namespace: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: p-cm, namespace: b}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: p-cr}
rules:
- resourceNames: [p-cm, sa]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: p-crb}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: p-cr}
subjects:
- {kind: ServiceAccount, name: p-sa, namespace: b}
)");
}

TEST_CASE("candidates in different namespaces for a subject without one are ambiguous") {
  ResourceList resources =
      renamed(std::string(two_namespaces) + "- {kind: ServiceAccount, name: sa}\n", "p-");
  CHECK_THROWS_WITH_AS(fix_name_references(resources),
                       "ClusterRoleBinding/p-crb: subjects[1]: \"sa\" may refer to several "
                       "resources: ServiceAccount/a/p-sa, ServiceAccount/b/p-sa",
                       Error);
}

TEST_CASE("malformed referring fields are errors naming the referrer and the field") {
  ResourceList no_name = renamed(R"(
apiVersion: v1
kind: ServiceAccount
metadata: {name: sa}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: rb}
subjects:
- {kind: ServiceAccount, namespace: default}
)",
                                 "p-");
  CHECK_THROWS_WITH_AS(fix_name_references(no_name),
                       "RoleBinding/p-rb: subjects[0]: no 'name' field in the reference", Error);

  ResourceList nested = renamed(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: cr}
rules:
- resourceNames: [[cm]]
)",
                                "p-");
  CHECK_THROWS_WITH_AS(
      fix_name_references(nested),
      "ClusterRole/p-cr: rules/resourceNames[0]: expected a name or a map with a name, found a "
      "sequence",
      Error);

  // kubectl fails on these even when nothing was renamed.
  for (const char* ns : {"5", "null"}) {
    ResourceList bad_namespace = load(
        std::string(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n"
            "metadata: {name: rb}\nsubjects:\n- {kind: ServiceAccount, name: sa, namespace: ") +
        ns + "}\n");
    CHECK_THROWS_WITH_AS(fix_name_references(bad_namespace),
                         "RoleBinding/rb: subjects[0].namespace: expected a string", Error);
  }
}

}  // namespace
}  // namespace fluxop::kustomize
