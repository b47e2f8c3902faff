#include <doctest/doctest.h>

#include <random>
#include <regex>

#include "core/instance/reader.h"
#include "core/instance/rules.h"
#include "core/names.h"
#include "support.h"

namespace fluxop::instance {
namespace {

using namespace testing;

constexpr std::string_view kSync = R"(  sync:
    kind: GitRepository
    url: https://example.com/fleet.git
    ref: refs/heads/main
    path: clusters/a
)";

TEST_CASE("apiVersion and kind are checked") {
  CHECK(error_of("apiVersion: fluxcd.controlplane.io/v1beta1\nkind: FluxInstance\n") ==
        "instance.yaml: .apiVersion: must be fluxcd.controlplane.io/v1");
  CHECK(error_of("kind: FluxInstance\n") ==
        "instance.yaml: .apiVersion: required field is missing");
  CHECK(error_of("apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSet\n") ==
        "instance.yaml: .kind: must be FluxInstance");
  CHECK(error_of("apiVersion: fluxcd.controlplane.io/v1\n") ==
        "instance.yaml: .kind: required field is missing");
  CHECK(error_of("- a\n") == "instance.yaml: expected a map, got sequence");
}

TEST_CASE("metadata: the name must be flux, the namespace a DNS label") {
  const std::string header = "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\n";
  const std::string spec = "spec: {distribution: {version: 2.x, registry: r}}\n";
  CHECK(error_of(header + spec) == "instance.yaml: .metadata: required field is missing");
  CHECK(error_of(header + "metadata: {namespace: a}\n" + spec) ==
        "instance.yaml: .metadata.name: required field is missing");
  CHECK(error_of(header + "metadata: {name: other}\n" + spec) ==
        "instance.yaml: .metadata.name: must be flux, the only name the Flux Operator accepts");
  const std::string not_a_label =
      "instance.yaml: .metadata.namespace: " + std::string(kDnsLabel.requirement);
  CHECK(error_of(header + "metadata: {name: flux, namespace: Flux_System}\n" + spec) ==
        not_a_label);
  CHECK(error_of(header + "metadata: {name: flux, namespace: " + std::string(64, 'a') + "}\n" +
                 spec) == not_a_label);
  CHECK(error_of(header + "metadata: {name: flux, namespace: \"\"}\n" + spec) == not_a_label);
  CHECK(error_of(header + "metadata: {name: flux}\n") ==
        "instance.yaml: .spec: required field is missing");
}

TEST_CASE("metadata keeps labels and annotations and accepts server-set fields") {
  FluxInstance instance = load(R"(apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
  uid: 16ca7202-9319-445b-99d0-617c25bda182
  resourceVersion: "12"
  generation: 3
  creationTimestamp: "2025-01-01T00:00:00Z"
  finalizers: [fluxcd.controlplane.io/finalizer]
  labels: {app.kubernetes.io/name: flux}
  annotations: {fluxcd.controlplane.io/reconcileEvery: 1h}
spec:
  distribution: {version: 2.x, registry: ghcr.io/fluxcd}
status:
  lastAppliedRevision: v2.3.0@sha256:4cc5
)");
  CHECK(instance.labels == StringMap{{"app.kubernetes.io/name", "flux"}});
  CHECK(instance.annotations == StringMap{{"fluxcd.controlplane.io/reconcileEvery", "1h"}});
}

TEST_CASE("required fields") {
  const std::string header =
      "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux}\n";
  CHECK(error_of(header + "spec: {}\n") ==
        "instance.yaml: .spec.distribution: required field is missing");
  CHECK(error_of(header + "spec: {distribution: {registry: r}}\n") ==
        "instance.yaml: .spec.distribution.version: required field is missing");
  CHECK(error_of(header + "spec: {distribution: {version: 2.x}}\n") ==
        "instance.yaml: .spec.distribution.registry: required field is missing");
  CHECK(error_of(header + "spec: {distribution: {version: \"\", registry: r}}\n") ==
        "instance.yaml: .spec.distribution.version: must not be empty");
  CHECK(error_of(header + "spec: {distribution: {version: null, registry: r}}\n") ==
        "instance.yaml: .spec.distribution.version: required field is missing");
  CHECK(error_with("  storage: {size: 10Gi}\n") ==
        "instance.yaml: .spec.storage.class: required field is missing");
  CHECK(error_with("  storage: {class: standard}\n") ==
        "instance.yaml: .spec.storage.size: required field is missing");
  CHECK(error_with("  sharding: {key: k}\n") ==
        "instance.yaml: .spec.sharding.shards: must not be empty");
  CHECK(error_with("  kustomize:\n    patches:\n      - target: {kind: Deployment}\n") ==
        "instance.yaml: .spec.kustomize.patches[0].patch: required field is missing");
  for (std::string_view field : {"kind", "url", "ref", "path"}) {
    std::string sync(kSync);
    std::size_t line = sync.find("    " + std::string(field) + ":");
    sync.erase(line, sync.find('\n', line) + 1 - line);
    CHECK(error_with(sync) ==
          "instance.yaml: .spec.sync." + std::string(field) + ": required field is missing");
  }
}

TEST_CASE("every enum is checked") {
  const std::string header =
      "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux}\n";
  CHECK(error_of(header + "spec: {distribution: {version: 2.x, registry: r, variant: alpine}}\n") ==
        "instance.yaml: .spec.distribution.variant: must be one of upstream-alpine, "
        "enterprise-alpine, enterprise-distroless, enterprise-distroless-fips, not \"alpine\"");
  CHECK(error_with("  components: [source-controller, flux-operator]\n") ==
        "instance.yaml: .spec.components[1]: must be one of source-controller, "
        "kustomize-controller, helm-controller, notification-controller, "
        "image-reflector-controller, image-automation-controller, source-watcher, not "
        "\"flux-operator\"");
  CHECK(error_with("  cluster: {type: eks}\n") ==
        "instance.yaml: .spec.cluster.type: must be one of kubernetes, openshift, aws, azure, gcp, "
        "not \"eks\"");
  CHECK(error_with("  cluster: {type: \"\"}\n") ==
        "instance.yaml: .spec.cluster.type: must be one of kubernetes, openshift, aws, azure, gcp, "
        "not \"\"");
  CHECK(error_with("  cluster: {size: huge}\n") ==
        "instance.yaml: .spec.cluster.size: must be one of small, medium, large, not \"huge\"");
  CHECK(
      error_with("  sharding: {shards: [a], storage: disk}\n") ==
      "instance.yaml: .spec.sharding.storage: must be one of ephemeral, persistent, not \"disk\"");
  std::string sync(kSync);
  CHECK(error_with(sync.replace(sync.find("GitRepository"), 13, "HelmRepository")) ==
        "instance.yaml: .spec.sync.kind: must be one of OCIRepository, GitRepository, Bucket, not "
        "\"HelmRepository\"");
  CHECK(error_with(std::string(kSync) + "    provider: gitlab\n") ==
        "instance.yaml: .spec.sync.provider: must be one of generic, aws, azure, gcp, github, not "
        "\"gitlab\"");
  for (std::string_view valid : {"kubernetes", "openshift", "aws", "azure", "gcp"}) {
    CHECK(load_minimal_with("  cluster: {type: " + std::string(valid) + "}\n").cluster.type ==
          valid);
  }
  for (std::string_view valid : {"small", "medium", "large"}) {
    CHECK(load_minimal_with("  cluster: {size: " + std::string(valid) + "}\n").cluster.size ==
          valid);
  }
}

TEST_CASE("patterns and limits") {
  const std::string header =
      "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux}\n";
  CHECK(error_of(header + "spec: {distribution: {version: 2.x, registry: r, artifact: "
                          "\"https://example.com/manifests\"}}\n") ==
        "instance.yaml: .spec.distribution.artifact: must be an oci:// URL");
  CHECK(error_of(header + "spec: {distribution: {version: 2.x, registry: r, artifact: \"\"}}\n") ==
        "instance.yaml: .spec.distribution.artifact: must be an oci:// URL");
  for (std::string_view interval : {"1d", "1", "1m ", "-1m", "1us", "1.m", "2562048h"}) {
    CHECK_MESSAGE(
        error_with(std::string(kSync) + "    interval: \"" + std::string(interval) + "\"\n") ==
            "instance.yaml: .spec.sync.interval: must be a duration such as 1m, 30s or "
            "1h30m, in ms, s, m or h, not \"" +
                std::string(interval) + "\"",
        interval);
  }
  CHECK(error_with(std::string(kSync) + "    name: " + std::string(64, 'a') + "\n") ==
        "instance.yaml: .spec.sync.name: must be at most 63 characters");
  CHECK(load_minimal_with(std::string(kSync) + "    name: " + std::string(63, 'a') + "\n")
            .sync->name.size() == 63);
  // The limit counts characters, not bytes: such a name is refused only for
  // being no DNS-1123 subdomain.
  std::string accented;
  for (int i = 0; i < 63; ++i) accented += "\u00e9";
  CHECK(error_with(std::string(kSync) + "    name: " + accented + "\n") ==
        "instance.yaml: .spec.sync.name: " + std::string(kDnsSubdomain.requirement));
}

TEST_CASE("interval: the CRD's pattern, read in one pass") {
  for (std::string_view interval : {".5s", "5.s", "1m1", "1sm", "ms", "1.5.5s"}) {
    CHECK_MESSAGE(
        error_with(std::string(kSync) + "    interval: \"" + std::string(interval) + "\"\n")
            .starts_with("instance.yaml: .spec.sync.interval: must be a duration"),
        interval);
  }
  CHECK(load_minimal_with(std::string(kSync) + "    interval: 1h1m1s1ms1.5s\n").sync->interval ==
        std::chrono::milliseconds{3662501});
  // std::regex recursed once per character of this and overflowed the stack.
  std::string many;
  for (int i = 0; i < 100000; ++i) many += "1s";
  CHECK(load_minimal_with(std::string(kSync) + "    interval: " + many + "\n").sync->interval ==
        std::chrono::seconds{100000});
  CHECK(error_with(std::string(kSync) + "    interval: " + many + "x\n")
            .starts_with("instance.yaml: .spec.sync.interval: must be a duration"));
}

TEST_CASE("type errors name the path and the expected type") {
  CHECK(error_with("  components: [source-controller, helm-controller, {a: b}]\n") ==
        "instance.yaml: .spec.components[2]: expected a string, got map");
  CHECK(error_with("  components: source-controller\n") ==
        "instance.yaml: .spec.components: expected a sequence, got string");
  CHECK(error_with("  cluster: [kubernetes]\n") ==
        "instance.yaml: .spec.cluster: expected a map, got sequence");
  CHECK(error_with("  cluster: {multitenant: \"true\"}\n") ==
        "instance.yaml: .spec.cluster.multitenant: expected a boolean, got string");
  CHECK(error_with("  cluster: {networkPolicy: 1}\n") ==
        "instance.yaml: .spec.cluster.networkPolicy: expected a boolean, got number");
  CHECK(error_with("  sharding: {shards: [a, 2]}\n") ==
        "instance.yaml: .spec.sharding.shards[1]: expected a string, got number");
  CHECK(error_with("  sharding: {shards: [a, null]}\n") ==
        "instance.yaml: .spec.sharding.shards[1]: expected a string, got null");
  CHECK(error_with("  commonMetadata: {labels: {app.kubernetes.io/part-of: true}}\n") ==
        "instance.yaml: .spec.commonMetadata.labels[\"app.kubernetes.io/part-of\"]: expected a "
        "string, got boolean");
  CHECK(error_with("  kustomize: {patches: [{patch: {op: add}}]}\n") ==
        "instance.yaml: .spec.kustomize.patches[0].patch: expected a string, got map");
  CHECK(error_with("  kustomize: {patches: [patch]}\n") ==
        "instance.yaml: .spec.kustomize.patches[0]: expected a map, got string");
  CHECK(error_with("  wait: sometimes\n") ==
        "instance.yaml: .spec.wait: expected a boolean, got string");
  const std::string header =
      "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux}\n";
  CHECK(error_of(header + "spec: {distribution: {version: 2.8, registry: r}}\n") ==
        "instance.yaml: .spec.distribution.version: expected a string, got number");
}

TEST_CASE("booleans are read as YAML 1.1, like upstream reads the file") {
  FluxInstance instance = load_minimal_with("  cluster: {multitenant: yes, networkPolicy: off}\n");
  CHECK(instance.cluster.multitenant);
  CHECK_FALSE(instance.cluster.network_policy);
  CHECK(error_with("  sharding: {shards: [on]}\n") ==
        "instance.yaml: .spec.sharding.shards[0]: expected a string, got boolean");
  CHECK(load_minimal_with("  sharding: {shards: [\"on\"]}\n").sharding->shards.front() == "on");
}

TEST_CASE("CEL rules of the CRD") {
  CHECK(error_with("  sharding: {shards: [a], storage: persistent}\n") ==
        "instance.yaml: .spec.sharding.storage: persistent requires .spec.storage to be set");
  CHECK(load_minimal_with("  sharding: {shards: [a], storage: persistent}\n"
                          "  storage: {class: standard, size: 10Gi}\n")
            .sharding->storage == "persistent");
  CHECK(error_with("  cluster: {multitenantWorkloadIdentity: true}\n") ==
        "instance.yaml: .spec.cluster.multitenantWorkloadIdentity: requires "
        ".spec.cluster.objectLevelWorkloadIdentity to be true");
  CHECK(load_minimal_with(
            "  cluster: {multitenantWorkloadIdentity: true, objectLevelWorkloadIdentity: true}\n")
            .cluster.multitenant_workload_identity);
  CHECK(error_with(std::string(kSync) + "    provider: gcp\n") ==
        "instance.yaml: .spec.sync.provider: gcp is only supported for OCIRepository and Bucket");
  std::string oci(kSync);
  oci.replace(oci.find("GitRepository"), 13, "OCIRepository");
  oci.replace(oci.find("https://example.com/fleet.git"), 29, "oci://ghcr.io/org/fleet");
  CHECK(load_minimal_with(oci + "    provider: gcp\n").sync->provider == "gcp");
  CHECK(error_with(oci + "    provider: github\n") ==
        "instance.yaml: .spec.sync.provider: github is only supported for GitRepository");
  CHECK(load_minimal_with(std::string(kSync) + "    provider: github\n").sync->provider ==
        "github");
}

TEST_CASE("components and shards are unique, shard names not empty") {
  CHECK(error_with("  components: [source-controller, helm-controller, source-controller]\n") ==
        "instance.yaml: .spec.components[2]: duplicate source-controller");
  CHECK(error_with("  sharding: {shards: [a, b, a]}\n") ==
        "instance.yaml: .spec.sharding.shards[2]: duplicate a");
  CHECK(error_with("  sharding: {shards: [a, \"\"]}\n") ==
        "instance.yaml: .spec.sharding.shards[1]: must not be empty");
}

// Values that become object names, label keys and values, or parts of paths.
TEST_CASE("names are checked as Kubernetes checks them, naming the field") {
  struct Field {
    std::string yaml;  // appended to kMinimal, VALUE standing for the value
    std::string path;
    const NameRule& rule;
    std::string valid;
  };
  const std::string sync = std::string(kSync) + "    ";
  const std::string distribution = "    ";  // kMinimal ends inside .spec.distribution
  const std::vector<Field> fields = {
      {"  sharding: {shards: [VALUE]}\n", ".spec.sharding.shards[0]", kDnsLabel, "shard-1"},
      {"  sharding: {shards: [a, VALUE]}\n", ".spec.sharding.shards[1]", kDnsLabel, "b"},
      {"  sharding: {key: VALUE, shards: [a]}\n", ".spec.sharding.key", kLabelKey,
       "example.com/Shard_key"},
      {sync + "name: VALUE\n", ".spec.sync.name", kDnsSubdomain, "fleet.main"},
      {sync + "pullSecret: VALUE\n", ".spec.sync.pullSecret", kDnsSubdomain, "git-auth"},
      {distribution + "imagePullSecret: VALUE\n", ".spec.distribution.imagePullSecret",
       kDnsSubdomain, "regcred"},
      {distribution + "artifactPullSecret: VALUE\n", ".spec.distribution.artifactPullSecret",
       kDnsSubdomain, "regcred"},
      {"  cluster: {domain: VALUE}\n", ".spec.cluster.domain", kDnsSubdomain, "example.internal"},
      {"  cluster: {tenantDefaultServiceAccount: VALUE}\n",
       ".spec.cluster.tenantDefaultServiceAccount", kDnsSubdomain, "flux.tenant"},
      {"  cluster: {tenantDefaultDecryptionServiceAccount: VALUE}\n",
       ".spec.cluster.tenantDefaultDecryptionServiceAccount", kDnsSubdomain, "sops"},
      {"  cluster: {tenantDefaultKubeConfigServiceAccount: VALUE}\n",
       ".spec.cluster.tenantDefaultKubeConfigServiceAccount", kDnsSubdomain, "kubeconfig"},
  };
  auto with = [](std::string yaml, std::string_view value) {
    constexpr std::string_view kValue = "VALUE";
    return yaml.replace(yaml.find(kValue), kValue.size(), "\"" + std::string(value) + "\"");
  };
  for (const Field& field : fields) {
    CAPTURE(field.path);
    CHECK_NOTHROW(load_minimal_with(with(field.yaml, field.valid)));
    for (std::string_view value : {"../x", "/tmp/x", "a/../../x", "-a", "a b"}) {
      CAPTURE(value);
      CHECK(error_with(with(field.yaml, value)) ==
            "instance.yaml: " + field.path + ": " + std::string(field.rule.requirement));
    }
  }
  // Dots and uppercase letters, which other names may hold, and the length.
  CHECK(error_with("  sharding: {shards: [a.b]}\n") ==
        "instance.yaml: .spec.sharding.shards[0]: " + std::string(kDnsLabel.requirement));
  CHECK(error_with("  sharding: {shards: [A]}\n") ==
        "instance.yaml: .spec.sharding.shards[0]: " + std::string(kDnsLabel.requirement));
  CHECK(error_with("  sharding: {shards: [" + std::string(64, 'a') + "]}\n") ==
        "instance.yaml: .spec.sharding.shards[0]: " + std::string(kDnsLabel.requirement));
  CHECK(load_minimal_with("  sharding: {shards: [" + std::string(63, 'a') + "]}\n")
            .sharding->shards.front()
            .size() == 63);
  CHECK(error_with(sync + "name: Fleet\n") ==
        "instance.yaml: .spec.sync.name: " + std::string(kDnsSubdomain.requirement));
  // Empty optional values take the defaults, as before.
  FluxInstance defaulted =
      load_minimal_with(distribution + "imagePullSecret: \"\"\n" +
                        "  cluster: {domain: \"\", tenantDefaultServiceAccount: \"\"}\n" + sync +
                        "pullSecret: \"\"\n    name: \"\"\n");
  CHECK(defaulted.cluster.domain == "cluster.local");
  CHECK(defaulted.sync->name == "flux-system");
}

// The instance, with `value` (quoted) in place of VALUE in `yaml`, a
// document or the spec fields appended to kMinimal.
std::string with_value(std::string yaml, std::string_view value) {
  constexpr std::string_view kValue = "VALUE";
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '\n') {
      quoted += "\\n";
    } else {
      quoted += c;
    }
  }
  return yaml.replace(yaml.find(kValue), kValue.size(), quoted + "\"");
}

TEST_CASE("the storage size is a quantity greater than zero, the class a DNS subdomain") {
  const std::string storage = "  storage: {class: standard, size: VALUE}\n";
  for (std::string_view size : {"10Gi", "1e3", "500M", "0.5Gi", "1", "+2Ti", "100e-3"}) {
    CAPTURE(size);
    CHECK(load_minimal_with(with_value(storage, size)).storage->size == size);
  }
  // Spaces around it, which upstream's template drops, are not part of it.
  CHECK(load_minimal_with(with_value(storage, " 10Gi ")).storage->size == " 10Gi ");
  for (std::string_view size :
       {"ten gigs", "-1Gi", "0", "0Gi", "10GB", "10 Gi", "1e", "10Gi\n  class: x", "Gi"}) {
    CAPTURE(size);
    CHECK(error_with(with_value(storage, size)) ==
          "instance.yaml: .spec.storage.size: must be a quantity greater than zero, such as 10Gi "
          "or 500M, not " +
              quote(size));
  }
  CHECK(load_minimal_with("  storage: {class: gp3.fast-1, size: 1Gi}\n").storage->storage_class ==
        "gp3.fast-1");
  for (std::string_view storage_class : {"Fast SSD", "../x", "a_b", "-a"}) {
    CAPTURE(storage_class);
    CHECK(error_with(with_value("  storage: {class: VALUE, size: 1Gi}\n", storage_class)) ==
          "instance.yaml: .spec.storage.class: " + std::string(kDnsSubdomain.requirement));
  }
}

TEST_CASE("labels and annotations are checked as Kubernetes checks them") {
  const std::string header =
      "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\n";
  const std::string spec = "spec: {distribution: {version: 2.x, registry: r}}\n";
  // The instance's own metadata, and what every rendered object gets.
  struct Place {
    std::string labels;       // a document with VALUE for a label's key or value
    std::string annotations;  // the same for an annotation
    std::string path;
  };
  const std::vector<Place> places = {
      {header + "  labels: {KEY: VALUE}\n" + spec, header + "  annotations: {KEY: VALUE}\n" + spec,
       ".metadata"},
      {std::string(kMinimal) + "  commonMetadata: {labels: {KEY: VALUE}}\n",
       std::string(kMinimal) + "  commonMetadata: {annotations: {KEY: VALUE}}\n",
       ".spec.commonMetadata"},
  };
  auto with = [](std::string yaml, std::string_view key, std::string_view value) {
    yaml.replace(yaml.find("KEY"), 3, "\"" + std::string(key) + "\"");
    return with_value(yaml, value);
  };
  for (const Place& place : places) {
    CAPTURE(place.path);
    for (std::string_view key : {"app", "app.kubernetes.io/part-of", "example.com/Key_1"}) {
      CAPTURE(key);
      CHECK_NOTHROW(load(with(place.labels, key, "flux_2.x-A")));
      CHECK_NOTHROW(load(with(place.labels, key, "")));
      CHECK_NOTHROW(load(with(place.annotations, key, "any text: at all\nover lines")));
    }
    for (std::string_view key : {"bad key", "-app", "Example.com/a", "a/b/c", "/a", ""}) {
      CAPTURE(key);
      CHECK(error_of(with(place.labels, key, "v")) ==
            "instance.yaml: " + key_path(place.path + ".labels", key) + ": " +
                std::string(kLabelKey.requirement));
      CHECK(error_of(with(place.annotations, key, "v")) ==
            "instance.yaml: " + key_path(place.path + ".annotations", key) + ": " +
                std::string(kAnnotationKey.requirement));
    }
    for (const std::string& value :
         std::vector<std::string>{"a b", "-a", "a.", "a/b", "a\nb", std::string(64, 'a')}) {
      CAPTURE(value);
      CHECK(error_of(with(place.labels, "app", value)) ==
            "instance.yaml: " + place.path +
                ".labels.app: " + std::string(kLabelValue.requirement));
    }
    // At most 256 KiB of annotations, keys and values together.
    CHECK_NOTHROW(load(with(place.annotations, "a", std::string(256 * 1024 - 1, 'x'))));
    CHECK(error_of(with(place.annotations, "a", std::string(256 * 1024, 'x'))) ==
          "instance.yaml: " + place.path +
              ".annotations: must be at most 256 KiB, keys and values together (262145 bytes)");
  }
}

TEST_CASE("the sync URL is one its kind's source takes") {
  auto sync = [](std::string_view kind) {
    return "  sync: {kind: " + std::string(kind) + ", url: VALUE, ref: main, path: ./}\n";
  };
  struct Kind {
    std::string_view name;
    std::vector<std::string_view> valid;
    std::vector<std::string_view> invalid;
    std::string requirement;
  };
  const std::vector<Kind> kinds = {
      {"GitRepository",
       {"https://github.com/org/fleet.git", "http://gitea.local:3000/org/fleet",
        "ssh://git@github.com/org/fleet.git", "ssh://git@[::1]:2222/fleet", "https://host"},
       {"git@github.com:org/fleet.git", "github.com/org/fleet", "ftp://host/fleet",
        "HTTPS://github.com/org", "oci://ghcr.io/org/fleet", "https://", "https:///fleet",
        "ssh://git@/fleet", "https://:443/fleet", "https://[]/fleet", "https://a b/fleet",
        "https://host/fleet\n  insecure: true", "https://host/\tfleet"},
       "must be an http://, https:// or ssh:// URL with a host for a GitRepository "
       "(ssh://git@host/path for git@host:path)"},
      {"OCIRepository",
       {"oci://ghcr.io/org/fleet", "oci://localhost:5000/fleet", "oci://registry"},
       {"ghcr.io/org/fleet", "https://ghcr.io/org/fleet", "oci://", "oci:///fleet",
        "OCI://ghcr.io/org", "oci://ghcr.io/org\nfleet"},
       "must be an oci:// URL with a host for an OCIRepository"},
      {"Bucket",
       // ("[::1]:9000", a host the URL rule takes, is YAML of its own: the
       // test of the sync values' YAML below)
       {"minio.example.com", "minio.example.com:9000", "10.0.0.1:9000",
        "https://account.blob.core.windows.net", "http://minio.local:9000", "s3.amazonaws.com"},
       {"s3://bucket", "oci://ghcr.io/org", "https://", ":9000", "/bucket", "a b",
        "minio.example.com\nbucketName: other", "evil.com:99999/../..", "minio:0",
        "minio:9000/bucket", "https://minio/bucket", "user@minio", "minio:", "-minio", "a..b",
        "[::1", "minio:90a"},
       "must be a host, with an optional port or http:// or https://, for a Bucket"},
  };
  for (const Kind& kind : kinds) {
    CAPTURE(kind.name);
    for (std::string_view url : kind.valid) {
      CAPTURE(url);
      CHECK(load_minimal_with(with_value(sync(kind.name), url)).sync->url == url);
    }
    for (std::string_view url : kind.invalid) {
      CAPTURE(url);
      CHECK(error_with(with_value(sync(kind.name), url)) ==
            "instance.yaml: .spec.sync.url: " + kind.requirement + ", not " + quote(url));
    }
  }
}

// What is written into the rendered source as it is has no line break that
// would add fields of its own.
// The registry starts every image name rendered: an image reference holds
// no control character, upper case in its path or empty component.
TEST_CASE("the registry is the start of an image name") {
  auto with_registry = [](std::string_view registry) {
    return "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux}\n"
           "spec: {distribution: {version: 2.x, registry: \"" +
           std::string(registry) + "\"}}\n";
  };
  for (std::string_view valid :
       {"ghcr.io/fluxcd", "registry.example.com/mirror/fluxcd/", "localhost:5000/flux", "r",
        "10.0.0.1:5000/a__b/c-d/e.f", "[::1]:5000/flux", "Registry.Example.com/flux"}) {
    CAPTURE(valid);
    CHECK(error_of(with_registry(valid)) == "");
  }
  for (std::string_view invalid :
       {"ghcr.io/fluxcd\\n  x: y", "ghcr.io/flux\\0cd", "ghcr.io/FluxCD", "ghcr.io//fluxcd",
        "ghcr.io/fluxcd//", "/fluxcd", "ghcr.io/flux cd", "ghcr.io/flux:v1", "ghcr.io/flux@sha256",
        "ghcr.io/-flux", "https://ghcr.io/flux"}) {
    CAPTURE(invalid);
    CHECK(
        error_of(with_registry(invalid))
            .rfind(
                "instance.yaml: .spec.distribution.registry: must be an image repository such as "
                "ghcr.io/fluxcd: an optional host[:port], then lowercase path components, at most "
                "227 characters, not ",
                0) == 0);
  }
  CHECK(error_of(with_registry(std::string(227, 'a'))) == "");
  CHECK(error_of(with_registry(std::string(228, 'a'))) != "");
}

// is_image_name against the grammar as a regular expression (the one it
// replaced), on every short string of the characters that matter and on
// random longer ones.
TEST_CASE("is_image_name reads the distribution reference grammar as the regex does") {
  const std::regex grammar(
      R"((?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*)"
      R"(|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?/)?)"
      R"([a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)");
  const std::string alphabet = "aZ0.-_:/[]";
  auto agree = [&](const std::string& name) {
    CAPTURE(name);
    CHECK(is_image_name(name) == std::regex_match(name, grammar));
  };
  // Every string of up to 5 of them: 111,110 names.
  std::vector<std::string> names{""};
  for (std::size_t length = 1, begin = 0; length <= 5; ++length) {
    std::size_t end = names.size();
    for (std::size_t i = begin; i < end; ++i)
      for (char c : alphabet) names.push_back(names[i] + c);
    begin = end;
  }
  for (const std::string& name : names) agree(name);
  std::mt19937 random(55);
  for (int i = 0; i < 20000; ++i) {
    std::string name(6 + random() % 20, ' ');
    for (char& c : name) c = alphabet[random() % alphabet.size()];
    agree(name);
  }
  for (std::string_view name :
       {"ghcr.io/fluxcd/x", "[::1]:5000/a__b/c--d", "a.b-c.d:80/x_y.z", "Host/x", "[]/x", "h:/x"})
    agree(std::string(name));
}

TEST_CASE("the sync ref and path have no control characters") {
  auto sync = [](std::string_view ref, std::string_view path) {
    return with_value(
        with_value("  sync: {kind: GitRepository, url: https://h/r, ref: VALUE, path: VALUE}\n",
                   ref),
        path);
  };
  CHECK(load_minimal_with(sync("refs/heads/main", "./clusters/my cluster")).sync->path ==
        "./clusters/my cluster");
  const std::string requirement = "must not contain control characters (line breaks, tabs), not ";
  for (std::string_view hostile : {"main\n  ignore: evil", "a\tb", "a\rb"}) {
    CAPTURE(hostile);
    CHECK(error_with(sync(hostile, "./")) ==
          "instance.yaml: .spec.sync.ref: " + requirement + quote(hostile));
    CHECK(error_with(sync("main", hostile)) ==
          "instance.yaml: .spec.sync.path: " + requirement + quote(hostile));
  }
}

// Upstream writes the sync values unquoted into the YAML of the sync objects:
// one that YAML reads otherwise would render a different value or type, or
// fail in an internal document. Each is refused naming the file and field.
TEST_CASE("the sync values read as the same text in the YAML they are written into") {
  const std::string git =
      "  sync: {kind: GitRepository, url: https://h/r, ref: main, path: ./, name: fleet}\n";
  auto with_field = [&](std::string_view field, std::string_view value) {
    std::string sync = git;
    std::size_t start = sync.find(std::string(field) + ": ") + field.size() + 2;
    sync.replace(start, sync.find_first_of(",}", start) - start, "VALUE");
    return with_value(sync, value);
  };
  // Text YAML reads back as written, however odd: kept as it is.
  for (std::string_view value :
       {"./clusters/my cluster", "a#b", "yes", "v1.0", "-a", "?a", "a-b_c.d/e", "100%"}) {
    CAPTURE(value);
    CHECK(load_minimal_with(with_field("path", value)).sync->path == value);
    CHECK(load_minimal_with(with_field("ref", value)).sync->ref == value);
  }
  struct Case {
    std::string_view value;
    std::string_view reading;
  };
  const std::vector<Case> cases = {{"a #b", "\"a\""},
                                   {"a ", "\"a\""},
                                   {"'a'", "\"a\""},
                                   {"!!str a", "\"a\""},
                                   {"&x a", "\"a\""},
                                   {"null", "null"},
                                   {"~", "null"},
                                   {"true", "a boolean"},
                                   {"false", "a boolean"},
                                   {"1", "an integer"},
                                   {"0x1F", "an integer"},
                                   {"1.0", "a number"},
                                   {".inf", "a number"},
                                   {"[a, b]", "a list"},
                                   {"- a", "invalid YAML"},
                                   {"{a: b}", "a map"},
                                   {"a: b", "invalid YAML"},
                                   {"*x", "invalid YAML"},
                                   {"[a", "invalid YAML"},
                                   {"a: b: c", "invalid YAML"},
                                   {"|", "\"\""},
                                   {"@a", "invalid YAML"}};
  for (const Case& c : cases) {
    CAPTURE(c.value);
    CHECK(error_with(with_field("path", c.value)) ==
          "instance.yaml: .spec.sync.path: must read as the same text in YAML, where the operator "
          "writes it unquoted into the Kustomization: " +
              quote(c.value) + " reads as " + std::string(c.reading));
    CHECK(error_with(with_field("ref", c.value)) ==
          "instance.yaml: .spec.sync.ref: must read as the same text in YAML, where the operator "
          "writes it unquoted into the GitRepository: " +
              quote(c.value) + " reads as " + std::string(c.reading));
  }
  // The URL, the name and the pull secret are written the same way.
  CHECK(error_with(with_field("url", "https://h/r #x")) ==
        "instance.yaml: .spec.sync.url: must read as the same text in YAML, where the operator "
        "writes it unquoted into the GitRepository: \"https://h/r #x\" reads as \"https://h/r\"");
  CHECK(error_with(with_field("name", "true")) ==
        "instance.yaml: .spec.sync.name: must read as the same text in YAML, where the operator "
        "writes it unquoted into the GitRepository and the Kustomization: \"true\" reads as a "
        "boolean");
  CHECK(error_with(git.substr(0, git.size() - 2) + ", pullSecret: \"123\"}\n") ==
        "instance.yaml: .spec.sync.pullSecret: must read as the same text in YAML, where the "
        "operator writes it unquoted into the GitRepository: \"123\" reads as an integer");
  CHECK(error_with("  sync: {kind: Bucket, url: \"[::1]:9000\", ref: b, path: ./}\n") ==
        "instance.yaml: .spec.sync.url: must read as the same text in YAML, where the operator "
        "writes it unquoted into the Bucket: \"[::1]:9000\" reads as invalid YAML");
  // An empty name takes its default; an empty pull secret is not written.
  CHECK(load_minimal_with(with_field("name", "")).sync->name == "flux-system");
}

// A huge value is quoted by its first characters, whichever field refuses it.
TEST_CASE("an error quotes at most a short prefix of a long value") {
  // 1 MiB, to keep the test quick (tests/cli/cli_test.sh builds with 10 MB values).
  const std::string huge = "_" + std::string(1024 * 1024, 'x') + " ";
  const std::string header = "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\n";
  const std::string spec = "spec: {distribution: {version: 2.x, registry: r}}\n";
  const std::string sync = std::string(kSync) + "    ";
  const std::vector<std::string> documents = {
      header + "metadata: {name: VALUE}\n" + spec,
      header + "metadata: {name: flux, namespace: VALUE}\n" + spec,
      // (a long key is an explicit one: YAML limits implicit keys to 1024 characters)
      header + "metadata:\n  name: flux\n  labels:\n    ? VALUE\n    : a\n" + spec,
      header + "metadata: {name: flux, labels: {a: VALUE}}\n" + spec,
      header + "metadata:\n  name: flux\n  annotations:\n    ? VALUE\n    : a\n" + spec,
      header + "metadata:\n  name: flux\n  ? VALUE\n  : a\n" + spec,
      std::string(kMinimal) + "    variant: VALUE\n",
      std::string(kMinimal) + "    imagePullSecret: VALUE\n",
      std::string(kMinimal) + "    artifact: VALUE\n",
      std::string(kMinimal) + "  components: [VALUE]\n",
      std::string(kMinimal) + "  cluster: {type: VALUE}\n",
      std::string(kMinimal) + "  cluster: {size: VALUE}\n",
      std::string(kMinimal) + "  cluster: {domain: VALUE}\n",
      std::string(kMinimal) + "  cluster: {tenantDefaultServiceAccount: VALUE}\n",
      std::string(kMinimal) + "  commonMetadata:\n    labels:\n      ? VALUE\n      : a\n",
      std::string(kMinimal) + "  commonMetadata: {labels: {a: VALUE}}\n",
      std::string(kMinimal) + "  commonMetadata:\n    annotations:\n      ? VALUE\n      : a\n",
      std::string(kMinimal) + "  storage: {class: VALUE, size: 1Gi}\n",
      std::string(kMinimal) + "  storage: {class: a, size: VALUE}\n",
      std::string(kMinimal) + "  sharding: {key: VALUE, shards: [a]}\n",
      std::string(kMinimal) + "  sharding: {shards: [VALUE]}\n",
      std::string(kMinimal) + "  sharding: {shards: [a], storage: VALUE}\n",
      std::string(kMinimal) + "  sync: {kind: VALUE, url: u, ref: r, path: p}\n",
      std::string(kMinimal) + "  sync: {kind: GitRepository, url: VALUE, ref: r, path: p}\n",
      sync + "name: VALUE\n",
      sync + "interval: VALUE\n",
      sync + "provider: VALUE\n",
      sync + "pullSecret: VALUE\n",
      std::string(kMinimal) + "  ? VALUE\n  : a\n",
  };
  for (const std::string& document : documents) {
    CAPTURE(document.substr(0, document.find("VALUE") + 5));
    std::string error = error_of(with_value(document, huge));
    CHECK(error.starts_with("instance.yaml: "));
    CHECK(error.size() < 400);
  }
}

TEST_CASE("unknown fields are errors naming the path, with a suggestion for typos") {
  // Named before the missing field it was meant to be.
  CHECK(error_with("  sharding: {shard: [a]}\n") ==
        "instance.yaml: .spec.sharding.shard: unknown field (did you mean shards?)");
  CHECK(error_with("  sharding: {shards: [a], shard: [b]}\n") ==
        "instance.yaml: .spec.sharding.shard: unknown field (did you mean shards?)");
  CHECK(error_with("  cluster: {networkpolicy: false}\n") ==
        "instance.yaml: .spec.cluster.networkpolicy: unknown field (did you mean networkPolicy?)");
  CHECK(error_with("  replicas: 2\n") == "instance.yaml: .spec.replicas: unknown field");
  CHECK(error_with("  kustomize:\n    patches:\n      - patch: x\n        targets: {}\n") ==
        "instance.yaml: .spec.kustomize.patches[0].targets: unknown field (did you mean target?)");
  CHECK(error_with("  kustomize: {patches: [{patch: x, target: {kind: A, names: b}}]}\n") ==
        "instance.yaml: .spec.kustomize.patches[0].target.names: unknown field (did you mean "
        "name?)");
  CHECK(error_of(std::string(kMinimal) + "extra: 1\n") == "instance.yaml: .extra: unknown field");
  CHECK(error_of("apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\n"
                 "metadata: {name: flux, label: {a: b}}\n"
                 "spec: {distribution: {version: 2.x, registry: r}}\n") ==
        "instance.yaml: .metadata.label: unknown field (did you mean labels?)");
  CHECK(error_with("  commonMetadata: {label: {a: b}}\n") ==
        "instance.yaml: .spec.commonMetadata.label: unknown field (did you mean labels?)");
  CHECK(error_with("  storage: {class: a, size: 1Gi, storageClass: b}\n") ==
        "instance.yaml: .spec.storage.storageClass: unknown field");
  CHECK(error_with("  kustomize: {patch: []}\n") ==
        "instance.yaml: .spec.kustomize.patch: unknown field (did you mean patches?)");
}

TEST_CASE("allow_unknown_fields turns unknown fields into warnings") {
  std::vector<std::string> warnings;
  FluxInstance instance = load(std::string(kMinimal) +
                                   "  sharding: {shards: [a], shard: [b]}\n"
                                   "  Cluster: {type: openshift}\n"
                                   "extra: 1\n",
                               warnings, LoadOptions{.allow_unknown_fields = true});
  // In the order of the document's traversal: the root, then .spec.
  CHECK(warnings ==
        std::vector<std::string>{
            "instance.yaml: .extra: unknown field, ignored",
            "instance.yaml: .spec.Cluster: unknown field, ignored (did you mean cluster?)",
            "instance.yaml: .spec.sharding.shard: unknown field, ignored (did you mean shards?)"});
  CHECK(instance.sharding->shards == std::vector<std::string>{"a"});
  CHECK(instance.cluster.type == "kubernetes");
  // Other errors stay errors.
  CHECK_THROWS_WITH_AS(load(std::string(kMinimal) + "  extra: 1\n  cluster: {type: eks}\n",
                            warnings, LoadOptions{.allow_unknown_fields = true}),
                       "instance.yaml: .spec.cluster.type: must be one of kubernetes, openshift, "
                       "aws, azure, gcp, not \"eks\"",
                       Error);
}

}  // namespace
}  // namespace fluxop::instance
