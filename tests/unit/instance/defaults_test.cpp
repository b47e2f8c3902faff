#include "core/instance/defaults.h"

#include <doctest/doctest.h>

#include "core/duration.h"
#include "support.h"

namespace fluxop::instance {
namespace {

using namespace testing;

TEST_CASE("a minimal instance gets the API server's and the operator's defaults") {
  FluxInstance instance = load(kMinimal);
  CHECK(instance.name == "flux");
  CHECK(instance.ns == "flux-system");
  CHECK(instance.distribution.version == "2.x");
  CHECK(instance.distribution.registry == "ghcr.io/fluxcd");
  CHECK(instance.distribution.variant.empty());
  CHECK(instance.distribution.artifact.empty());
  CHECK(instance.components == std::vector<std::string>{"source-controller", "kustomize-controller",
                                                        "helm-controller",
                                                        "notification-controller"});
  CHECK(instance.cluster.type == "kubernetes");
  CHECK(instance.cluster.domain == "cluster.local");
  CHECK(instance.cluster.network_policy);
  CHECK_FALSE(instance.cluster.multitenant);
  CHECK_FALSE(instance.cluster.multitenant_workload_identity);
  CHECK_FALSE(instance.cluster.object_level_workload_identity);
  CHECK(instance.cluster.size.empty());
  CHECK(instance.cluster.tenant_default_service_account == "default");
  CHECK(instance.cluster.tenant_default_decryption_service_account == "default");
  CHECK(instance.cluster.tenant_default_kubeconfig_service_account == "default");
  CHECK_FALSE(instance.common_metadata);
  CHECK_FALSE(instance.storage);
  CHECK_FALSE(instance.sharding);
  CHECK_FALSE(instance.sync);
  CHECK(instance.patches.empty());
  CHECK(instance.wait);
  CHECK(instance.migrate_resources);
  CHECK(instance.file == "instance.yaml");
}

TEST_CASE("an empty cluster gets the schema's defaults") {
  for (std::string_view cluster :
       {"  cluster: {}\n", "  cluster:\n", "  cluster: {type: null}\n"}) {
    FluxInstance instance = load_minimal_with(cluster);
    CHECK(instance.cluster.type == "kubernetes");
    CHECK(instance.cluster.domain == "cluster.local");
    CHECK(instance.cluster.network_policy);
  }
}

TEST_CASE("explicit values win over the defaults") {
  FluxInstance instance = load_minimal_with(R"(  components: [source-controller]
  cluster:
    networkPolicy: false
    domain: example.internal
    tenantDefaultServiceAccount: tenant
)");
  CHECK(instance.components == std::vector<std::string>{"source-controller"});
  CHECK_FALSE(instance.cluster.network_policy);
  CHECK(instance.cluster.domain == "example.internal");
  CHECK(instance.cluster.tenant_default_service_account == "tenant");
  CHECK(instance.cluster.tenant_default_decryption_service_account == "default");
}

TEST_CASE("an empty domain renders with the default domain, as upstream does") {
  CHECK(load_minimal_with("  cluster: {domain: \"\"}\n").cluster.domain == "cluster.local");
}

TEST_CASE("an empty components list means the default components") {
  CHECK(load_minimal_with("  components: []\n").components.size() == 4);
}

TEST_CASE("sharding gets its key and storage defaults") {
  FluxInstance instance = load_minimal_with("  sharding:\n    shards: [a, b]\n");
  REQUIRE(instance.sharding);
  CHECK(instance.sharding->key == "sharding.fluxcd.io/key");
  CHECK(instance.sharding->shards == std::vector<std::string>{"a", "b"});
  CHECK(instance.sharding->storage == "ephemeral");
}

TEST_CASE("an empty sharding key renders with the default key, as upstream does") {
  FluxInstance instance = load_minimal_with("  sharding:\n    key: \"\"\n    shards: [a]\n");
  REQUIRE(instance.sharding);
  CHECK(instance.sharding->key == "sharding.fluxcd.io/key");
}

TEST_CASE("sync gets its interval and name defaults") {
  FluxInstance instance = load(R"(apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata: {name: flux, namespace: infra}
spec:
  distribution: {version: 2.x, registry: ghcr.io/fluxcd}
  sync: {kind: GitRepository, url: "https://example.com/fleet.git", ref: refs/heads/main, path: clusters/a}
)");
  REQUIRE(instance.sync);
  CHECK(format_go_duration(instance.sync->interval) == "1m0s");
  CHECK(instance.sync->name == "infra");
  CHECK(instance.sync->provider.empty());
  CHECK(instance.sync->pull_secret.empty());
}

TEST_CASE("wait and migrateResources default to true and can be turned off") {
  FluxInstance instance = load_minimal_with("  wait: false\n  migrateResources: false\n");
  CHECK_FALSE(instance.wait);
  CHECK_FALSE(instance.migrate_resources);
}

TEST_CASE("schema defaults fill missing and null fields of present objects only") {
  yaml::Node document = yaml::parse_document(R"(spec:
  cluster: {type: null, domain: custom}
  sync: {}
)",
                                             "t.yaml");
  apply_schema_defaults(document);
  CHECK(document.string_at({"spec", "cluster", "type"}) == "kubernetes");
  CHECK(document.string_at({"spec", "cluster", "domain"}) == "custom");
  CHECK(document.find({"spec", "cluster", "networkPolicy"})->text() == "true");
  CHECK(document.string_at({"spec", "sync", "interval"}) == "1m");
  CHECK(document.find({"spec", "sharding"}) == nullptr);
  CHECK(document.find({"spec", "wait"})->text() == "true");
}

TEST_CASE("the document is kept as it was read") {
  FluxInstance instance = load(kMinimal);
  CHECK(instance.source == yaml::parse_document(kMinimal, "t.yaml"));
}

}  // namespace
}  // namespace fluxop::instance
