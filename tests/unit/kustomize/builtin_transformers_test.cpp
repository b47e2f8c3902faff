#include "core/kustomize/builtin_transformers.h"

#include <doctest/doctest.h>

#include "support.h"

namespace fluxop::kustomize {
namespace {

using namespace testing;

const char* app = R"(apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata:
      labels:
        app: web
)";

const char* labels_file = R"(apiVersion: builtin
kind: LabelTransformer
metadata:
  name: team
labels:
  team: from-file
fieldSpecs:
- path: metadata/labels
  create: true
- kind: Deployment
  path: spec/template/metadata/labels
  create: true
  unknownKey: ignored
)";

}  // namespace

// kubectl kustomize's output for the same kustomization.
TEST_CASE("builtin transformers from files and inline, inline ones first") {
  MemoryDir dir;
  dir.write("labels.yaml", labels_file);
  check_transform(transform_transformers, R"(- labels.yaml
- |-
  apiVersion: builtin
  kind: LabelTransformer
  metadata:
    name: inline
  labels:
    team: inline
    tier: web
  fieldSpecs:
  - path: metadata/labels
    create: true
  ---
  apiVersion: builtin
  kind: AnnotationsTransformer
  metadata:
    name: notes
  annotations:
    note: "1"
  fieldSpecs:
  - kind: Service
    path: metadata/annotations
    create: true
  - kind: Deployment
    path: spec/template/metadata/annotations
)",
                  app,
                  R"(apiVersion: v1
kind: Service
metadata:
  annotations:
    note: "1"
  labels:
    team: from-file
    tier: web
  name: web
spec:
  selector:
    app: web
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    team: from-file
    tier: web
  name: web
spec:
  template:
    metadata:
      labels:
        app: web
        team: from-file
)",
                  context_in(dir));
}

TEST_CASE("unsupported transformer entries are refused") {
  MemoryDir dir;
  dir.write("labels.yaml", labels_file);
  dir.write("prefix.yaml",
            "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata:\n  name: p\nprefix: "
            "x-\n");
  dir.write("plugin.yaml", "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: p\n");
  dir.write("nameless.yaml", "apiVersion: builtin\nkind: LabelTransformer\nlabels: {a: b}\n");
  dir.write("bad-labels.yaml",
            "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: l\nlabels: {a: 1}\n");
  dir.write("bad-specs.yaml",
            "apiVersion: builtin\nkind: AnnotationsTransformer\nmetadata:\n  name: l\n"
            "annotations: {a: b}\nfieldSpecs:\n- path: x\n  create: \"yes\"\n");
  dir.write("base/kustomization.yaml", "resources: []\n");
  auto check = [&dir](std::string_view field, std::string_view message) {
    check_error(transform_transformers, field, app, message, context_in(dir));
  };

  check("- labels.yaml\n- prefix.yaml",
        "kustomization.yaml: transformers[1]: prefix.yaml: kind PrefixSuffixTransformer is "
        "not supported");
  check("- |\n  apiVersion: builtin\n  kind: ImageTagTransformer\n",
        "kustomization.yaml: transformers[0]: kind ImageTagTransformer is not supported");
  check("- plugin.yaml",
        "kustomization.yaml: transformers[0]: plugin.yaml: apiVersion example.com/v1 is not "
        "supported: only builtin transformers are");
  check("- nameless.yaml",
        "kustomization.yaml: transformers[0]: nameless.yaml: missing metadata.name");
  check("- bad-labels.yaml",
        "kustomization.yaml: transformers[0]: bad-labels.yaml: labels.a: expected a string, "
        "found 1");
  check("- bad-specs.yaml",
        "kustomization.yaml: transformers[0]: bad-specs.yaml: fieldSpecs[0].create: expected "
        "true or false, found \"yes\"");
  check("- base",
        "kustomization.yaml: transformers[0]: base is a directory: only files of builtin "
        "transformer configs are supported");
  check("- missing.yaml", "kustomization.yaml: transformers[0]: missing.yaml: no such file");
  check("labels.yaml",
        "kustomization.yaml: transformers: expected a sequence, found \"labels.yaml\"");
  check("- [labels.yaml]",
        "kustomization.yaml: transformers[0]: expected a string, found a sequence");
}

}  // namespace fluxop::kustomize
