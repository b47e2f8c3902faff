#include <doctest/doctest.h>

#include "../temp_dir.h"
#include "core/duration.h"
#include "support.h"

namespace fluxop::instance {
namespace {

using namespace testing;

// Every field of the schema, none at its default.
constexpr std::string_view kMaximal = R"yaml(apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-infra
  labels:
    team: platform
  annotations:
    fluxcd.controlplane.io/reconcileEvery: 30m
spec:
  distribution:
    version: ">=2.6.0 <2.9.0"
    registry: registry.example.com/controlplaneio-fluxcd/distroless
    variant: enterprise-distroless-fips
    imagePullSecret: enterprise-auth
    artifact: oci://registry.example.com/flux-operator-manifests:v1
    artifactPullSecret: artifact-auth
  components:
    - source-controller
    - kustomize-controller
    - helm-controller
    - notification-controller
    - image-reflector-controller
    - image-automation-controller
    - source-watcher
  cluster:
    type: openshift
    size: large
    multitenant: true
    multitenantWorkloadIdentity: true
    objectLevelWorkloadIdentity: true
    tenantDefaultServiceAccount: flux-tenant
    tenantDefaultDecryptionServiceAccount: flux-decryption
    tenantDefaultKubeConfigServiceAccount: flux-kubeconfig
    networkPolicy: false
    domain: example.internal
  commonMetadata:
    labels:
      app.kubernetes.io/name: flux
    annotations:
      toolkit.fluxcd.io/tenant: sre-team
  storage:
    class: fast
    size: 20Gi
  sharding:
    key: example.com/shard
    shards: [shard1, shard2]
    storage: persistent
  sync:
    name: fleet
    kind: OCIRepository
    url: oci://ghcr.io/example/fleet
    ref: latest
    path: clusters/prod
    pullSecret: oci-auth
    provider: gcp
    interval: 1h30m
  kustomize:
    patches:
      - target:
          group: apps
          version: v1
          kind: Deployment
          name: "(kustomize-controller|helm-controller)"
          namespace: flux-infra
          labelSelector: app.kubernetes.io/part-of=flux
          annotationSelector: example.com/patch=true
        patch: |
          - op: add
            path: /spec/template/spec/priorityClassName
            value: system-cluster-critical
      - patch: |
          apiVersion: v1
          kind: Namespace
          metadata:
            name: flux-infra
  wait: false
  migrateResources: false
)yaml";

void check_maximal(const FluxInstance& instance) {
  CHECK(instance.name == "flux");
  CHECK(instance.ns == "flux-infra");
  CHECK(instance.labels == StringMap{{"team", "platform"}});
  CHECK(instance.annotations == StringMap{{"fluxcd.controlplane.io/reconcileEvery", "30m"}});

  const Distribution& d = instance.distribution;
  CHECK(d.version == ">=2.6.0 <2.9.0");
  CHECK(d.registry == "registry.example.com/controlplaneio-fluxcd/distroless");
  CHECK(d.variant == "enterprise-distroless-fips");
  CHECK(d.image_pull_secret == "enterprise-auth");
  CHECK(d.artifact == "oci://registry.example.com/flux-operator-manifests:v1");
  CHECK(d.artifact_pull_secret == "artifact-auth");

  CHECK(instance.components ==
        std::vector<std::string>{"source-controller", "kustomize-controller", "helm-controller",
                                 "notification-controller", "image-reflector-controller",
                                 "image-automation-controller", "source-watcher"});

  const Cluster& c = instance.cluster;
  CHECK(c.type == "openshift");
  CHECK(c.size == "large");
  CHECK(c.multitenant);
  CHECK(c.multitenant_workload_identity);
  CHECK(c.object_level_workload_identity);
  CHECK(c.tenant_default_service_account == "flux-tenant");
  CHECK(c.tenant_default_decryption_service_account == "flux-decryption");
  CHECK(c.tenant_default_kubeconfig_service_account == "flux-kubeconfig");
  CHECK_FALSE(c.network_policy);
  CHECK(c.domain == "example.internal");

  REQUIRE(instance.common_metadata);
  CHECK(instance.common_metadata->labels == StringMap{{"app.kubernetes.io/name", "flux"}});
  CHECK(instance.common_metadata->annotations ==
        StringMap{{"toolkit.fluxcd.io/tenant", "sre-team"}});

  REQUIRE(instance.storage);
  CHECK(instance.storage->storage_class == "fast");
  CHECK(instance.storage->size == "20Gi");

  REQUIRE(instance.sharding);
  CHECK(instance.sharding->key == "example.com/shard");
  CHECK(instance.sharding->shards == std::vector<std::string>{"shard1", "shard2"});
  CHECK(instance.sharding->storage == "persistent");

  REQUIRE(instance.sync);
  const Sync& s = *instance.sync;
  CHECK(s.name == "fleet");
  CHECK(s.kind == "OCIRepository");
  CHECK(s.url == "oci://ghcr.io/example/fleet");
  CHECK(s.ref == "latest");
  CHECK(s.path == "clusters/prod");
  CHECK(s.pull_secret == "oci-auth");
  CHECK(s.provider == "gcp");
  CHECK(s.interval == std::chrono::minutes{90});
  CHECK(format_go_duration(s.interval) == "1h30m0s");

  REQUIRE(instance.patches.size() == 2);
  const Patch& first = instance.patches[0];
  REQUIRE(first.target);
  CHECK(first.target->group == "apps");
  CHECK(first.target->version == "v1");
  CHECK(first.target->kind == "Deployment");
  CHECK(first.target->name == "(kustomize-controller|helm-controller)");
  CHECK(first.target->ns == "flux-infra");
  CHECK(first.target->label_selector == "app.kubernetes.io/part-of=flux");
  CHECK(first.target->annotation_selector == "example.com/patch=true");
  CHECK(first.patch ==
        "- op: add\n  path: /spec/template/spec/priorityClassName\n  value: "
        "system-cluster-critical\n");
  CHECK_FALSE(instance.patches[1].target);
  CHECK(instance.patches[1].patch ==
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-infra\n");

  CHECK_FALSE(instance.wait);
  CHECK_FALSE(instance.migrate_resources);
}

TEST_CASE("a maximal instance keeps every field") {
  FluxInstance instance = load(kMaximal);
  check_maximal(instance);
  CHECK(instance.source == yaml::parse_document(kMaximal, "t.yaml"));
}

TEST_CASE("an instance is read from a file") {
  fluxop::testing::TempDir dir;
  dir.write("flux.yaml", std::string("---\n") + std::string(kMaximal) + "---\n");
  std::vector<std::string> warnings;
  FluxInstance instance = load_instance_file((dir.path() / "flux.yaml").string(), {}, warnings);
  check_maximal(instance);
  CHECK(instance.file == (dir.path() / "flux.yaml").string());
  CHECK(warnings.empty());
}

TEST_CASE("a file must hold exactly one document") {
  fluxop::testing::TempDir dir;
  std::string path = (dir.path() / "flux.yaml").string();
  std::vector<std::string> warnings;
  dir.write("flux.yaml", std::string(kMinimal) + "---\n" + std::string(kMinimal));
  CHECK_THROWS_WITH_AS(load_instance_file(path, {}, warnings),
                       (path + ": expected one FluxInstance document, found 2").c_str(), Error);
  dir.write("flux.yaml", "# nothing\n");
  CHECK_THROWS_WITH_AS(load_instance_file(path, {}, warnings),
                       (path + ": expected one FluxInstance document, found 0").c_str(), Error);
  // Errors in the document name the file.
  dir.write("flux.yaml", std::string(kMinimal) + "  cluster: {size: xl}\n");
  CHECK_THROWS_WITH_AS(
      load_instance_file(path, {}, warnings),
      (path + ": .spec.cluster.size: must be one of small, medium, large, not \"xl\"").c_str(),
      Error);
  CHECK_THROWS_AS(load_instance_file((dir.path() / "missing.yaml").string(), {}, warnings), Error);
}

}  // namespace
}  // namespace fluxop::instance
