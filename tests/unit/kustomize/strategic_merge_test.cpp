// Expected results were taken from `kubectl kustomize` (kustomize v5.5.0)
// applying the same patch through `patches:`.
#include "core/kustomize/strategic_merge.h"

#include <doctest/doctest.h>

#include "core/kustomize/merge_keys.h"
#include "support.h"

namespace fluxop::kustomize {
namespace {

using yaml::Node;
using namespace testing;

const std::string kDeployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\n";
const std::string kNoMetadata = "apiVersion: apps/v1\nkind: Deployment\n";

Node parse(const std::string& text) { return yaml::parse_document(text, "test.yaml"); }

// The target after the patch; both are given without the Deployment header.
Node merged(const std::string& target, const std::string& patch,
            const std::string& header = kDeployment) {
  Node object = parse(header + target);
  REQUIRE(apply_strategic_merge(object, parse(header + patch)));
  return object;
}

Node expected(const std::string& text, const std::string& header = kDeployment) {
  return parse(header + text);
}

std::string pod_spec(const std::string& spec) { return "spec:\n  template:\n    spec:\n" + spec; }

std::string merge_error(const std::string& target, const std::string& patch) {
  Node object = parse(kDeployment + target);
  return error_message([&] { (void)apply_strategic_merge(object, parse(kDeployment + patch)); });
}

TEST_CASE("merge keys come from kustomize's built-in schema") {
  using Keys = std::vector<std::string>;
  CHECK(merge_keys("apps/v1", "Deployment", "spec.template.spec.containers") == Keys{"name"});
  CHECK(merge_keys("apps/v1", "Deployment", "spec.template.spec.containers.ports") ==
        Keys{"containerPort", "protocol"});
  CHECK(merge_keys("v1", "Service", "spec.ports") == Keys{"port", "protocol"});
  CHECK(merge_keys("v1", "Pod", "spec.containers.volumeMounts") == Keys{"mountPath"});
  CHECK(merge_keys("batch/v1", "CronJob", "spec.jobTemplate.spec.template.spec.volumes") ==
        Keys{"name"});
  CHECK(merge_keys("v1", "ConfigMap", "metadata.finalizers") == Keys{});
  CHECK(merge_keys("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "webhooks") ==
        Keys{"name"});
  CHECK_FALSE(merge_keys("apps/v1", "Deployment", "spec.template.spec.tolerations"));
  CHECK_FALSE(merge_keys("autoscaling/v2", "HorizontalPodAutoscaler", "metadata.finalizers"));
  CHECK(has_builtin_schema("networking.k8s.io/v1", "NetworkPolicy"));
  CHECK_FALSE(has_builtin_schema("example.com/v1", "Widget"));
}

TEST_CASE("maps merge recursively, null deletes, scalars replace") {
  CHECK(merged("spec: {replicas: 1, x: {a: 1, b: 2}, y: [1], z: 1}\n",
               "spec: {replicas: 3, x: {a: null, c: 3}, y: null, z: null, w: null}\n") ==
        expected("spec: {replicas: 3, x: {b: 2, c: 3}}\n"));
}

TEST_CASE("a target's own nulls survive, null in a new subtree is dropped") {
  CHECK(merged("spec: {replicas: null, paused: ~}\n", "spec: {v: {a: null, b: 1}}\n") ==
        expected("spec: {replicas: null, paused: null, v: {b: 1}}\n"));
}

TEST_CASE("missing target paths are created") {
  CHECK(merged("spec: {replicas: 1}\n", pod_spec("      containers: [{name: a, image: a}]\n")) ==
        expected("spec: {replicas: 1, template: {spec: {containers: [{name: a, image: a}]}}}\n"));
}

TEST_CASE("merged lists: patch items first, then the target's remaining items") {
  CHECK(
      merged(pod_spec("      containers: [{name: a, image: a}, {name: b, image: b}]\n"),
             pod_spec("      containers: [{name: b, image: b2}, {name: c, image: c}]\n")) ==
      expected(pod_spec(
          "      containers: [{name: b, image: b2}, {name: c, image: c}, {name: a, image: a}]\n")));
}

TEST_CASE("lists without a merge strategy are replaced") {
  CHECK(merged(pod_spec("      tolerations: [{key: x}]\n"),
               pod_spec("      tolerations: [{key: y}]\n")) ==
        expected(pod_spec("      tolerations: [{key: y}]\n")));
}

// kustomize's matching on several keys loses the patch items that match a
// target item on only some of them, and misses the delete: kubectl prints this.
TEST_CASE("container ports merge by containerPort and protocol, as kustomize does") {
  CHECK(merged(pod_spec("      containers:\n"
                        "      - name: a\n"
                        "        ports: [{containerPort: 80}, {containerPort: 80, protocol: UDP},\n"
                        "                {containerPort: 443, protocol: TCP, name: https},\n"
                        "                {containerPort: 9000}]\n"),
               pod_spec("      containers:\n"
                        "      - name: a\n"
                        "        ports: [{containerPort: 80, protocol: TCP, name: http},\n"
                        "                {containerPort: 443, name: s},\n"
                        "                {containerPort: 9000, $patch: delete},\n"
                        "                {containerPort: 7000, protocol: UDP}]\n")) ==
        expected(
            pod_spec("      containers:\n"
                     "      - name: a\n"
                     "        ports: [{containerPort: 7000, protocol: UDP}, {containerPort: 80},\n"
                     "                {containerPort: 80, protocol: UDP},\n"
                     "                {containerPort: 443, protocol: TCP, name: https},\n"
                     "                {containerPort: 9000}]\n")));
}

TEST_CASE("service ports merge by port and protocol") {
  const std::string service = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n";
  CHECK(
      merged("spec:\n  ports: [{port: 80, targetPort: 8080, name: http},"
             " {port: 53, protocol: UDP, name: dns}]\n",
             "spec:\n  ports: [{port: 80, targetPort: 9090},"
             " {port: 53, protocol: TCP, name: dnstcp}]\n",
             service) ==
      expected("spec:\n  ports: [{port: 53, protocol: TCP, name: dnstcp},"
               " {port: 80, targetPort: 9090, name: http}, {port: 53, protocol: UDP, name: dns}]\n",
               service));
}

TEST_CASE("nested merge lists: env by name inside containers of a CronJob") {
  const std::string cron = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\n";
  auto job = [](const std::string& containers) {
    return "spec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n"
           "          containers: " +
           containers + "\n";
  };
  CHECK(merged(job("[{name: a, image: a, env: [{name: A, value: a}]}]"),
               job("[{name: a, env: [{name: B, value: b}, {name: A, value: null}]}]"), cron) ==
        expected(job("[{name: a, image: a, env: [{name: B, value: b}, {name: A}]}]"), cron));
}

TEST_CASE("scalar lists with merge strategy are unioned, patch values first") {
  CHECK(merged("metadata: {name: app, finalizers: [a, b]}\n",
               "metadata: {name: app, finalizers: [c, a, c]}\n", kNoMetadata) ==
        expected("metadata: {name: app, finalizers: [c, a, b]}\n", kNoMetadata));
}

TEST_CASE("$patch: delete on a map, a list item, a list, the object") {
  CHECK(merged("spec: {selector: {matchLabels: {a: b}}, replicas: 1}\n",
               "spec: {selector: {$patch: delete}}\n") == expected("spec: {replicas: 1}\n"));
  CHECK(merged(pod_spec("      containers: [{name: a}, {name: b}, {name: c}]\n"
                        "      initContainers: [{name: i}]\n"),
               pod_spec("      containers: [{name: b, $patch: delete}]\n"
                        "      initContainers: [{$patch: delete}]\n")) ==
        expected(pod_spec("      containers: [{name: a}, {name: c}]\n")));
  Node object = parse(kDeployment + "spec: {replicas: 1}\n");
  CHECK_FALSE(apply_strategic_merge(object, parse(kDeployment + "$patch: delete\n")));
}

TEST_CASE("$patch: replace on a map and a list, on a list item and the object it is ignored") {
  CHECK(merged("spec: {template: {metadata: {labels: {x: y}}}}\n",
               "spec: {template: {metadata: {labels: {q: r, $patch: replace}}}}\n") ==
        expected("spec: {template: {metadata: {labels: {q: r}}}}\n"));
  CHECK(merged(pod_spec("      volumes: [{name: v1, emptyDir: {}}]\n"),
               pod_spec("      volumes: [{$patch: replace}, {name: v2, emptyDir: {}}]\n")) ==
        expected(pod_spec("      volumes: [{name: v2, emptyDir: {}}]\n")));
  CHECK(merged(pod_spec("      containers: [{name: a, image: a, args: [x]}]\n"),
               pod_spec("      containers: [{name: a, image: a2, $patch: replace}]\n")) ==
        expected(pod_spec("      containers: [{name: a, image: a, args: [x]}]\n")));
  CHECK(merged("spec: {replicas: 1, paused: true}\n", "$patch: replace\nspec: {replicas: 2}\n") ==
        expected("spec: {replicas: 1, paused: true}\n"));
}

TEST_CASE("$patch: merge is the default and is removed") {
  CHECK(merged(pod_spec("      containers: [{name: a, image: a}, {name: b, image: b}]\n"),
               pod_spec("      containers: [{$patch: merge}, {name: b, image: b2}]\n")) ==
        expected(pod_spec("      containers: [{name: b, image: b2}, {name: a, image: a}]\n")));
  CHECK(merged("spec: {m: {x: 1}}\n", "spec: {m: {y: 2, $patch: merge}}\n") ==
        expected("spec: {m: {x: 1, y: 2}}\n"));
}

// A new list is merged with itself without reading its own `$patch` item,
// which (having no merge key) then deletes its named items.
TEST_CASE("map directives in a new subtree apply to it, a new list keeps its $patch item") {
  CHECK(merged("spec: {replicas: 1}\n",
               pod_spec(
                   "      nodeSelector: {$patch: replace, a: b}\n"
                   "      affinity: {$patch: delete}\n"
                   "      volumes: [{name: v, $patch: delete}, {name: w}, {$patch: replace}]\n")) ==
        expected("spec: {replicas: 1, template: {spec: {nodeSelector: {a: b}, volumes: [{$patch: "
                 "replace}]}}}\n"));
}

TEST_CASE("$retainKeys, $setElementOrder and $deleteFromPrimitiveList stay as plain fields") {
  CHECK(merged("metadata: {name: app, finalizers: [a, b]}\n"
               "spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}\n",
               "metadata: {name: app, $deleteFromPrimitiveList/finalizers: [b]}\n"
               "spec: {strategy: {$retainKeys: [type], type: Recreate}}\n",
               kNoMetadata) ==
        expected(
            "metadata: {name: app, finalizers: [a, b], $deleteFromPrimitiveList/finalizers: [b]}\n"
            "spec: {strategy: {$retainKeys: [type], type: Recreate, rollingUpdate: {maxSurge: "
            "1}}}\n",
            kNoMetadata));
  CHECK(merged(pod_spec("      containers: [{name: a}, {name: b}]\n"),
               pod_spec("      $setElementOrder/containers: [{name: b}, {name: a}]\n"
                        "      containers: [{name: a, image: a2}]\n")) ==
        expected(pod_spec("      $setElementOrder/containers: [{name: b}, {name: a}]\n"
                          "      containers: [{name: a, image: a2}, {name: b}]\n")));
}

TEST_CASE("empty and null lists") {
  CHECK(merged(pod_spec("      containers: []\n      initContainers: null\n      volumes: []\n"
                        "      imagePullSecrets: [{name: a}]\n"),
               pod_spec("      containers: [{name: a}]\n      initContainers: [{name: i}]\n"
                        "      volumes: []\n      imagePullSecrets: []\n")) ==
        expected(pod_spec("      containers: [{name: a}]\n      initContainers: [{name: i}]\n"
                          "      volumes: []\n      imagePullSecrets: [{name: a}]\n")));
  CHECK(merged(pod_spec("      containers: [{name: a}]\n"), pod_spec("      containers: null\n")) ==
        expected("spec: {template: {spec: {}}}\n"));
}

TEST_CASE("duplicate merge keys collapse to the last target item") {
  CHECK(merged(pod_spec("      containers: [{name: a, image: a1}, {name: a, image: a2}]\n"),
               pod_spec("      containers: [{name: a, args: [x]}]\n")) ==
        expected(pod_spec("      containers: [{name: a, image: a2}]\n")));
}

TEST_CASE("an item without its merge key disturbs the whole list, as in kustomize") {
  // The keyless patch item matches (and deletes) every named target item;
  // the keyless target item then displaces the rest.
  CHECK(
      merged(pod_spec("      containers: [{name: a, image: a1}, {name: b}, {image: nokey}, {}]\n"),
             pod_spec("      containers: [{name: b, image: b2}, {image: nokey2},"
                      " {name: c}, {name: c, image: c2}]\n")) ==
      expected(pod_spec("      containers: [{image: nokey}]\n")));
}

TEST_CASE("unknown kinds replace every list, a nested built-in object merges by its schema") {
  const std::string widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n";
  CHECK(merged("  finalizers: [a]\nspec:\n  items: [{name: a, v: 1}, {name: b, v: 2}]\n"
               "  nested:\n    apiVersion: apps/v1\n    kind: Deployment\n"
               "    spec: {template: {spec: {containers: [{name: a}, {name: b}]}}}\n",
               "  finalizers: [b]\nspec:\n  items: [{name: a, v: 3}]\n"
               "  nested: {spec: {template: {spec: {containers: [{name: b, image: b2}]}}}}\n",
               widget) ==
        expected("  finalizers: [b]\nspec:\n  items: [{name: a, v: 3}]\n"
                 "  nested:\n    apiVersion: apps/v1\n    kind: Deployment\n"
                 "    spec: {template: {spec: {containers: [{name: b, image: b2}, {name: a}]}}}\n",
                 widget));
}

TEST_CASE("type mismatches are errors naming the path") {
  CHECK(merge_error(pod_spec("      containers: [{name: a}]\n"),
                    pod_spec("      containers: {name: a}\n")) ==
        "spec.template.spec.containers: expected a sequence, got map");
  CHECK(merge_error("spec: {replicas: 1}\n", "spec: {replicas: {a: 1}}\n") ==
        "spec.replicas: expected a scalar, got map");
  CHECK(merge_error(pod_spec("      containers: [{name: a}, foo]\n"),
                    pod_spec("      containers: [{name: a, image: b}]\n")) ==
        "spec.template.spec.containers: expected a map, got scalar");
  SUBCASE("patch items of a list merged by key are maps: one without the key would replace all") {
    CHECK(merge_error(pod_spec("      containers: [{name: a}, {name: b}]\n"),
                      pod_spec("      containers: [manager]\n")) ==
          "spec.template.spec.containers: expected a map, got scalar");
    CHECK(merge_error(pod_spec("      containers: [{name: a}]\n"),
                      pod_spec("      containers: [{name: a}, [b]]\n")) ==
          "spec.template.spec.containers: expected a map, got sequence");
  }
}

TEST_CASE("unknown $patch values are errors naming the path") {
  CHECK(merge_error(pod_spec("      containers: [{name: a}]\n"),
                    pod_spec("      containers: [{name: a}, {$patch: foo}]\n")) ==
        "spec.template.spec.containers: unknown patch strategy \"foo\"");
  CHECK(merge_error("spec: {template: {}}\n", "spec: {template: {$patch: foo}}\n") ==
        "spec.template: unknown patch strategy \"foo\"");
}

}  // namespace
}  // namespace fluxop::kustomize
