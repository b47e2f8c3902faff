#include "core/kustomize/patches.h"

#include <doctest/doctest.h>

#include "support.h"

namespace fluxop::kustomize {
namespace {

using yaml::Node;
using namespace testing;

constexpr std::string_view kResources = R"(
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels: {app: web}
spec:
  replicas: 1
---
apiVersion: v1
kind: Service
metadata:
  name: svc
  namespace: prod
  labels: {app: web}
spec:
  type: ClusterIP
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: config
data: {a: "1"}
)";

struct Run {
  MemoryDir directory;
  ResourceList list = load(kResources);

  void patches(std::string_view field) {
    transform_patches(list, yaml_of(field), context_in(directory));
  }
  std::string error_of(Transformer transformer, std::string_view field) {
    return error_message([&] { transformer(list, yaml_of(field), context_in(directory)); });
  }
  std::string patches_error(std::string_view field) { return error_of(transform_patches, field); }

  const Node& object(std::string_view name) const {
    for (const Resource& r : list) {
      if (r.name() == name) return r.object();
    }
    FAIL("no resource named " << name);
    static const Node none;
    return none;
  }
  std::string at(std::string_view name, std::initializer_list<std::string_view> path) const {
    return object(name).string_at(path, "<none>");
  }
};

TEST_CASE("patches: JSON 6902 with a target") {
  Run run;
  SUBCASE("inline YAML operations, on every selected resource") {
    run.patches(R"(
- target: {labelSelector: app=web}
  patch: |
    - op: add
      path: /metadata/annotations
      value: {patched: "yes"}
)");
    CHECK(run.at("app", {"metadata", "annotations", "patched"}) == "yes");
    CHECK(run.at("svc", {"metadata", "annotations", "patched"}) == "yes");
    CHECK(run.at("config", {"metadata", "annotations", "patched"}) == "<none>");
  }
  SUBCASE("JSON operations from a file") {
    run.directory.write("ops.json", R"([{"op": "replace", "path": "/spec/replicas", "value": 3}])");
    run.patches("[{path: ops.json, target: {kind: Deployment}}]");
    CHECK(run.at("app", {"spec", "replicas"}) == "3");
  }
  SUBCASE("a target selecting nothing is not an error") {
    run.patches(R"([{patch: '[{"op": "remove", "path": "/nope"}]', target: {name: nothing}}])");
    CHECK(run.list.size() == 3);
  }
  SUBCASE("an empty patch file is an empty JSON patch") {
    run.directory.write("empty.yaml", "");
    run.patches("[{path: empty.yaml, target: {kind: Service}}]");
    CHECK(run.object("svc") == load(kResources)[1].object());
    CHECK(run.patches_error("[{path: empty.yaml}]") ==
          "kustomization.yaml: patches[0]: a JSON patch needs a target");
  }
  SUBCASE("a rename is remembered: later targets match the original name") {
    run.patches(R"(
- target: {kind: Deployment}
  patch: '[{"op": "replace", "path": "/metadata/name", "value": "renamed"}]'
- target: {name: app}
  patch: '[{"op": "add", "path": "/metadata/labels/found", "value": "yes"}]'
)");
    CHECK(run.at("renamed", {"metadata", "labels", "found"}) == "yes");
    CHECK(run.list[0].original_id().name == "app");
  }
  SUBCASE("operations in YAML are read as YAML 1.1, as sigs.k8s.io/yaml reads them") {
    run.patches(R"(
- target: {kind: ConfigMap}
  patch: |
    - {op: add, path: /data/on, value: [yes, Off, y, "y", 'no', nope]}
- target: {kind: ConfigMap}
  patch: '[{"op": "add", "path": "/data/json", "value": "y"}]'
)");
    CHECK(run.object("config").find({"data", "on"})->items() ==
          yaml_of("[true, false, true, 'y', 'no', nope]").items());
    CHECK(run.object("config").find({"data", "json"})->is_string());
  }
  SUBCASE("a patch starting with [ must be JSON, as kustomize decodes it") {
    CHECK(run.patches_error("[{patch: '[{op: add}]', target: {name: svc}}]")
              .rfind("kustomization.yaml: patches[0]: a patch starting with \"[\" must be JSON: "
                     "parse error at line 1, column 3",
                     0) == 0);
    CHECK(run.patches_error("[{patch: '[]', target: {name: svc}}]") ==
          "kustomization.yaml: patches[0]: the patch is empty");
  }
  SUBCASE("metadata.annotations is there for the patch, as kustomize's bookkeeping makes it") {
    run.patches(R"(
- target: {kind: ConfigMap}
  patch: '[{"op": "add", "path": "/metadata/annotations/x", "value": "1"}]'
- target: {kind: Deployment}
  patch: '[{"op": "add", "path": "/spec/paused", "value": true}]'
)");
    CHECK(run.at("config", {"metadata", "annotations", "x"}) == "1");
    CHECK(run.object("app").find({"metadata", "annotations"}) == nullptr);
  }
  SUBCASE("errors name the entry and the resource") {
    CHECK(run.patches_error("[{patch: '- {op: add, path: /x, value: 1}'}]") ==
          "kustomization.yaml: patches[0]: a JSON patch needs a target");
    CHECK(run.patches_error(R"([{target: {kind: Service},
                                 patch: '- {op: replace, path: /spec/nope/x, value: 1}'}])") ==
          "kustomization.yaml: patches[0]: Service/prod/svc: [0] replace /spec/nope/x: path not "
          "found");
  }
}

TEST_CASE("patches: strategic merge without a target") {
  Run run;
  SUBCASE("applies to the resource with the patch's id") {
    run.patches(R"(
- patch: |
    apiVersion: v1
    kind: Service
    metadata: {name: svc, namespace: prod}
    spec: {type: NodePort}
)");
    CHECK(run.at("svc", {"spec", "type"}) == "NodePort");
  }
  SUBCASE("no namespace is the default namespace") {
    run.patches(R"(
- patch: |
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: app, namespace: default}
    spec: {replicas: 2}
)");
    CHECK(run.at("app", {"spec", "replicas"}) == "2");
    CHECK(run.at("app", {"metadata", "namespace"}) == "<none>");
  }
  SUBCASE("several documents in one file, matched by previous names too") {
    run.list[0].set_name("p-app");
    run.directory.write("patch.yaml", R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec: {replicas: 4}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: config}
data: {b: "2"}
)");
    run.patches("[{path: patch.yaml}]");
    CHECK(run.at("p-app", {"spec", "replicas"}) == "4");
    CHECK(run.object("config").find({"data"})->size() == 2);
  }
  SUBCASE("$patch: delete removes the resource") {
    run.patches(R"(
- patch: |
    $patch: delete
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: config}
)");
    CHECK(run.list.size() == 2);
  }
  SUBCASE("no match is an error") {
    CHECK(run.patches_error(R"(
- patch: |
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: app, namespace: prod}
)") == "kustomization.yaml: patches[0]: no resource matches strategic merge patch apps/v1 "
       "Deployment/prod/app");
    CHECK(run.patches_error(R"(
- patch: |
    apiVersion: v1
    kind: all
    metadata: {name: all}
)") == "kustomization.yaml: patches[0]: no resource matches strategic merge patch v1 all/all");
  }
}

TEST_CASE("patches: strategic merge with a target") {
  Run run;
  SUBCASE("the Flux idiom: name and kind `all` apply to every selected resource") {
    run.patches(R"(
- target: {labelSelector: app=web}
  patch: |
    apiVersion: v1
    kind: all
    metadata:
      name: all
      namespace: elsewhere
      labels: {patched: "yes"}
)");
    REQUIRE(run.list.size() == 3);
    CHECK(run.list[0].object() == yaml_of(R"(
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels: {app: web, patched: "yes"}
spec:
  replicas: 1
)"));
    CHECK(run.at("svc", {"metadata", "labels", "patched"}) == "yes");
    CHECK(run.at("svc", {"metadata", "namespace"}) == "prod");
    CHECK(run.at("svc", {"kind"}) == "Service");
    CHECK(run.at("config", {"metadata", "labels", "patched"}) == "<none>");
  }
  SUBCASE("allowNameChange and allowKindChange let the patch rename") {
    run.patches(R"(
- target: {kind: ConfigMap}
  options: {allowNameChange: true, allowKindChange: true}
  patch: |
    apiVersion: v1
    kind: Secret
    metadata: {name: renamed}
)");
    CHECK(run.at("renamed", {"kind"}) == "Secret");
    CHECK(run.list[2].original_id().name == "config");
  }
  SUBCASE("$patch: delete removes every selected resource") {
    run.patches(R"(
- target: {labelSelector: app=web}
  patch: |
    $patch: delete
    apiVersion: v1
    kind: x
    metadata: {name: x}
)");
    REQUIRE(run.list.size() == 1);
    CHECK(run.list[0].name() == "config");
  }
  SUBCASE("several patches in one entry are refused with a target") {
    CHECK(run.patches_error(R"(
- target: {kind: Service}
  patch: |
    {apiVersion: v1, kind: Service, metadata: {name: a}}
    ---
    {apiVersion: v1, kind: Service, metadata: {name: b}}
)") == "kustomization.yaml: patches[0]: a patch with a target must hold one strategic merge "
       "patch, not 2");
  }
}

TEST_CASE("patches: what a patch makes is charged to the build's node budget") {
  Run run;
  Context context = context_in(run.directory);
  SUBCASE("a strategic merge, once for each resource it applies to") {
    transform_patches(run.list, yaml_of(R"(
- target: {labelSelector: app=web}
  patch: '{kind: any, metadata: {name: any, labels: {x: y}}}'
)"),
                      context);
    CHECK(context.budget->used() == 2 * 7);
  }
  SUBCASE("JSON is bounded in nesting as YAML is, before it is built") {
    std::string deep = std::string(5000, '[') + std::string(5000, ']');
    CHECK(run.patches_error("[{patch: '[{\"op\": \"add\", \"path\": \"/x\", \"value\": " + deep +
                            "}]', target: {name: svc}}]") ==
          "kustomization.yaml: patches[0]: nested deeper than 100 levels");
  }
}

TEST_CASE("patches: a patched object keeps what makes it one Kubernetes takes") {
  Run run;
  const std::string name_rule =
      "must be a name: at most 253 characters, not \".\" or \"..\", without '/', '%' or control "
      "characters";
  struct Case {
    std::string_view operation;
    std::string problem;
  };
  for (const Case& c : {
           Case{"{op: remove, path: /kind}", "kind: must be a non-empty string"},
           Case{"{op: replace, path: /apiVersion, value: \"\"}",
                "apiVersion: must be a non-empty string"},
           Case{"{op: replace, path: /apiVersion, value: {a: 1}}",
                "apiVersion: must be a non-empty string"},
           Case{"{op: remove, path: /metadata/name}", "metadata.name: " + name_rule},
           Case{"{op: replace, path: /metadata/name, value: ../x}", "metadata.name: " + name_rule},
           Case{"{op: replace, path: /metadata/name, value: \"a\\nb\"}",
                "metadata.name: " + name_rule},
           Case{"{op: remove, path: /metadata}", "metadata.name: " + name_rule},
       }) {
    CAPTURE(c.operation);
    // Each on resources of its own: a patch works on the object in place, and
    // what a failing one leaves of it is not used (the build fails).
    Run fresh;
    CHECK(fresh.patches_error("[{target: {name: config}, patch: '- " + std::string(c.operation) +
                              "'}]") ==
          "kustomization.yaml: patches[0]: ConfigMap/config: the patched object's " + c.problem);
  }
  SUBCASE("a strategic merge allowed to rename") {
    CHECK(run.patches_error("[{target: {name: config}, options: {allowNameChange: true}, "
                            "patch: '{kind: ConfigMap, metadata: {name: a/b}}'}]") ==
          "kustomization.yaml: patches[0]: ConfigMap/config: the patched object's "
          "metadata.name: " +
              name_rule);
  }
  SUBCASE("what the object came without is not the patch's doing") {
    run.list[2].object().remove("apiVersion");
    run.patches("[{target: {name: config}, patch: '- {op: add, path: /data/b, value: x}'}]");
    CHECK(run.at("config", {"data", "b"}) == "x");
  }
}

TEST_CASE("patches: entry errors") {
  Run run;
  run.directory.write("ops.yaml", "- {op: remove, path: /x}\n");
  CHECK(run.patches_error("{patch: x}") ==
        "kustomization.yaml: patches: must be a list, not a map");
  CHECK(run.patches_error("[x]") ==
        "kustomization.yaml: patches[0]: must be a map with a path or a patch, not a scalar");
  CHECK(run.patches_error("[{path: ops.yaml, bogus: 1}]") ==
        "kustomization.yaml: patches[0].bogus: unknown field (expected path, patch, target or "
        "options)");
  CHECK(run.patches_error("[{path: ops.yaml, patch: '[]'}]") ==
        "kustomization.yaml: patches[0]: path and patch can't both be set");
  CHECK(run.patches_error("[{target: {kind: Service}}]") ==
        "kustomization.yaml: patches[0]: needs a path or a patch");
  CHECK(run.patches_error("[{patch: '  '}]") ==
        "kustomization.yaml: patches[0]: needs a path or a patch");
  CHECK(run.patches_error("[{path: [a]}]") ==
        "kustomization.yaml: patches[0].path: must be a string");
  CHECK(run.patches_error("[{path: missing.yaml}]").find("missing.yaml") != std::string::npos);
  CHECK(run.patches_error("[{path: ops.yaml, target: {kind: '('}}]")
            .rfind("kustomization.yaml: patches[0].target.kind: invalid regular expression", 0) ==
        0);
  CHECK(run.patches_error("[{path: ops.yaml, options: {allowNamechange: true}}]") ==
        "kustomization.yaml: patches[0].options.allowNamechange: unknown option (expected "
        "allowNameChange or allowKindChange)");
  CHECK(run.patches_error("[{path: ops.yaml, options: {allowNameChange: 'yes'}}]") ==
        "kustomization.yaml: patches[0].options.allowNameChange: must be a boolean");
  CHECK(run.patches_error("[{patch: '# nothing'}]") ==
        "kustomization.yaml: patches[0]: the patch is empty");
  CHECK(run.patches_error("[{patch: 'kind: Service'}]") ==
        "kustomization.yaml: patches[0]: document 1 has no metadata.name");
  CHECK(run.patches_error("[{patch: 'metadata: {name: a}'}]") ==
        "kustomization.yaml: patches[0]: document 1 has no kind");
  CHECK(run.patches_error("[{patch: 'just text'}]") ==
        "kustomization.yaml: patches[0]: document 1 is a scalar, neither a strategic merge patch "
        "(an object) nor a JSON patch (a list of operations)");
  CHECK(
      run.patches_error("[{patch: '{a: [}'}]").rfind("kustomization.yaml: patches[0]: patch:", 0) ==
      0);
}

TEST_CASE("patchesStrategicMerge") {
  Run run;
  run.directory.write("replicas.yaml", R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec: {replicas: 5}
)");
  SUBCASE("file paths and inline patches") {
    transform_patches_strategic_merge(run.list, yaml_of(R"(
- replicas.yaml
- |
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: config}
  data: {a: "2"}
)"),
                                      context_in(run.directory));
    CHECK(run.at("app", {"spec", "replicas"}) == "5");
    CHECK(run.at("config", {"data", "a"}) == "2");
  }
  SUBCASE("errors") {
    CHECK(run.error_of(transform_patches_strategic_merge, "[missing.yaml]").find("missing.yaml") !=
          std::string::npos);
    CHECK(run.error_of(transform_patches_strategic_merge, "['']") ==
          "kustomization.yaml: patchesStrategicMerge[0]: must be a file path or an inline patch");
    CHECK(run.error_of(transform_patches_strategic_merge,
                       "['{apiVersion: v1, kind: Secret, metadata: {name: s}}']") ==
          "kustomization.yaml: patchesStrategicMerge[0]: no resource matches strategic merge "
          "patch v1 Secret/s");
  }
}

TEST_CASE("patchesJson6902") {
  Run run;
  run.directory.write("ops.yaml", "- {op: replace, path: /spec/type, value: NodePort}\n");
  SUBCASE("applies to the target") {
    transform_patches_json6902(run.list, yaml_of(R"(
- target: {version: v1, kind: Service, name: svc, namespace: prod}
  path: ops.yaml
)"),
                               context_in(run.directory));
    CHECK(run.at("svc", {"spec", "type"}) == "NodePort");
  }
  SUBCASE("metadata.annotations is there only on renamed resources") {
    std::string_view field = R"(
- target: {name: svc}
  patch: '[{"op": "add", "path": "/metadata/annotations/x", "value": "1"}]'
)";
    CHECK(run.error_of(transform_patches_json6902, field) ==
          "kustomization.yaml: patchesJson6902[0]: Service/prod/svc: [0] add "
          "/metadata/annotations/x: path not found");
    run.list[1].set_name("p-svc");
    transform_patches_json6902(run.list, yaml_of(field), context_in(run.directory));
    CHECK(run.at("p-svc", {"metadata", "annotations", "x"}) == "1");
  }
  SUBCASE("a rename is not remembered, unlike with `patches`") {
    transform_patches_json6902(run.list, yaml_of(R"(
- target: {name: config}
  patch: '[{"op": "replace", "path": "/metadata/name", "value": "renamed"}]'
- target: {name: config}
  patch: '[{"op": "add", "path": "/data/hit", "value": "1"}]'
)"),
                               context_in(run.directory));
    CHECK(run.at("renamed", {"data", "hit"}) == "<none>");
    CHECK(run.list[2].previous_ids().empty());
  }
  SUBCASE("errors") {
    CHECK(run.error_of(transform_patches_json6902, "[{path: ops.yaml}]") ==
          "kustomization.yaml: patchesJson6902[0].target: is required");
    CHECK(run.error_of(transform_patches_json6902, "[{path: ops.yaml, target: {kind: Service}}]") ==
          "kustomization.yaml: patchesJson6902[0].target.name: is required");
    CHECK(run.error_of(transform_patches_json6902, "[{patch: '{a: b}', target: {name: svc}}]") ==
          "kustomization.yaml: patchesJson6902[0]: a JSON patch must be a non-empty list of "
          "operations");
    CHECK(run.error_of(
              transform_patches_json6902,
              "[{patch: '- {op: test, path: /spec/type, value: x}', target: {name: svc}}]") ==
          "kustomization.yaml: patchesJson6902[0]: Service/prod/svc: [0] test /spec/type: test "
          "failed");
  }
}

}  // namespace
}  // namespace fluxop::kustomize
