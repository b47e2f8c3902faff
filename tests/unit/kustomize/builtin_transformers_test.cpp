#include "core/kustomize/builtin_transformers.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string_view>

#include <unistd.h>

#include "core/error.h"
#include "core/yaml/emit.h"
#include "core/yaml/parse.h"

namespace fluxop::kustomize {
namespace {

namespace fs = std::filesystem;

// A kustomization directory with the given files.
class Dir {
 public:
  Dir() : path_(fs::temp_directory_path() / ("fluxop-transformers-" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
  }
  ~Dir() { fs::remove_all(path_); }
  void write(const std::string& name, std::string_view text) {
    fs::create_directories((path_ / name).parent_path());
    std::ofstream(path_ / name) << text;
  }
  Context context() const { return {path_.string(), "kustomization.yaml"}; }

 private:
  fs::path path_;
};

ResourceList load(std::string_view text) {
  ResourceList resources;
  for (auto& document : yaml::parse_documents(text, "resources.yaml")) {
    resources.emplace_back(std::move(document), "resources.yaml");
  }
  return resources;
}

std::string render(const ResourceList& resources) {
  std::vector<yaml::Node> documents;
  for (const auto& resource : resources) documents.push_back(resource.object());
  return yaml::emit_stream(documents);
}

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

void check_error(Dir& dir, std::string_view field, std::string_view message) {
  ResourceList resources = load(app);
  yaml::Node node = yaml::parse_document(field, "field");
  CHECK_THROWS_WITH_AS(transform_transformers(resources, node, dir.context()),
                       std::string(message).c_str(), Error);
}

}  // namespace

// kubectl kustomize's output for the same kustomization.
TEST_CASE("builtin transformers from files and inline, inline ones first") {
  Dir dir;
  dir.write("labels.yaml", labels_file);
  ResourceList resources = load(app);
  transform_transformers(resources,
                         yaml::parse_document(R"(- labels.yaml
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
                                              "field"),
                         dir.context());
  CHECK(render(resources) == R"(apiVersion: v1
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
)");
}

TEST_CASE("unsupported transformer entries are refused") {
  Dir dir;
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

  check_error(dir, "- labels.yaml\n- prefix.yaml",
              "kustomization.yaml: transformers[1]: prefix.yaml: kind PrefixSuffixTransformer is "
              "not supported");
  check_error(dir, "- |\n  apiVersion: builtin\n  kind: ImageTagTransformer\n",
              "kustomization.yaml: transformers[0]: kind ImageTagTransformer is not supported");
  check_error(dir, "- plugin.yaml",
              "kustomization.yaml: transformers[0]: plugin.yaml: apiVersion example.com/v1 is not "
              "supported: only builtin transformers are");
  check_error(dir, "- nameless.yaml",
              "kustomization.yaml: transformers[0]: nameless.yaml: missing metadata.name");
  check_error(dir, "- bad-labels.yaml",
              "kustomization.yaml: transformers[0]: bad-labels.yaml: labels.a: expected a string, "
              "found 1");
  check_error(dir, "- bad-specs.yaml",
              "kustomization.yaml: transformers[0]: bad-specs.yaml: fieldSpecs[0].create: expected "
              "true or false, found \"yes\"");
  check_error(dir, "- base",
              "kustomization.yaml: transformers[0]: base is a directory: only files of builtin "
              "transformer configs are supported");
  check_error(dir, "- missing.yaml",
              "kustomization.yaml: transformers[0]: missing.yaml: no such file");
  check_error(dir, "labels.yaml",
              "kustomization.yaml: transformers: expected a sequence, found \"labels.yaml\"");
  check_error(dir, "- [labels.yaml]",
              "kustomization.yaml: transformers[0]: expected a string, found a sequence");
}

}  // namespace fluxop::kustomize
