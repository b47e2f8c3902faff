#include "core/kustomize/build.h"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/file_system.h"

namespace {

using fluxop::disk;
using fluxop::Error;
using fluxop::kustomize::build;

constexpr std::string_view kConfigMap = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
)";

std::vector<std::string> ids(const fluxop::kustomize::ResourceList& resources) {
  std::vector<std::string> out;
  for (const auto& r : resources) out.push_back(r.id().to_string());
  return out;
}

// Files by path under the kustomization directory, /k.
using Tree = std::vector<std::pair<std::string, std::string>>;

fluxop::MemoryFileSystem tree_at_k(const Tree& tree) {
  fluxop::MemoryFileSystem files;
  for (const auto& [path, text] : tree) files.add("/k/" + path, text);
  return files;
}

// A kustomization tree the build refuses, and what its error says.
struct Refusal {
  std::string what;
  Tree tree;
  std::string message;
};

const std::string kConfigMapText(kConfigMap);

const std::vector<Refusal> kRefusals = {
    // Fields outside the subset are named.
    {"a generator",
     {{"kustomization.yaml", "resources: []\nconfigMapGenerator:\n- name: x\n"}},
     "/k/kustomization.yaml: configMapGenerator: generators are not supported by fluxopctl"},
    {"Helm charts",
     {{"kustomization.yaml", "helmCharts: []\n"}},
     "helmCharts: Helm charts are not supported"},
    {"components",
     {{"kustomization.yaml", "components: [x]\n"}},
     "components: components are not supported"},
    {"replacements",
     {{"kustomization.yaml", "replacements: []\n"}},
     "replacements: replacements are not"},
    {"an unknown field", {{"kustomization.yaml", "resourcez: []\n"}}, "resourcez: unknown field"},
    {"a Component",
     {{"kustomization.yaml", "kind: Component\n"}},
     "kind: components are not supported"},
    {"another apiVersion",
     {{"kustomization.yaml", "apiVersion: v1\n"}},
     "apiVersion: must be kustomize.config.k8s.io/v1beta1"},
    {"another order",
     {{"kustomization.yaml", "sortOptions: {order: fifo}\n"}},
     "sortOptions: only order: legacy"},
    // Remote resources, missing files, cycles.
    {"a remote resource",
     {{"kustomization.yaml", "resources:\n- https://github.com/org/repo//deploy?ref=v1\n"}},
     "resources[0]: remote resources are not supported"},
    {"a missing file",
     {{"kustomization.yaml", "resources:\n- missing.yaml\n"}},
     "resources[0]: no such file or directory: \"missing.yaml\""},
    {"a cycle",
     {{"kustomization.yaml", "resources:\n- a\n"},
      {"a/kustomization.yaml", "resources:\n- ../a\n"}},
     "cycle detected"},
    {"resources not a list",
     {{"kustomization.yaml", "resources: cm.yaml\n"}},
     "resources: must be a list"},
    // Duplicate ids, with both origins.
    {"a duplicate id",
     {{"kustomization.yaml", "resources:\n- a.yaml\n- b.yaml\n"},
      {"a.yaml", kConfigMapText},
      {"b.yaml", kConfigMapText + "  namespace: default\n"}},
     "resources[1]: resource ConfigMap/default/cm"},
    // A base reached by several paths: the third reach is a copy of the
    // second build, refused all the same.
    {"a base reached again unrenamed",
     {{"kustomization.yaml", "resources:\n- a\n- b\n- base\n"},
      {"a/kustomization.yaml", "namePrefix: a-\nresources:\n- ../base\n"},
      {"b/kustomization.yaml", "resources:\n- ../base\n"},
      {"base/kustomization.yaml", "resources:\n- cm.yaml\n"},
      {"base/cm.yaml", kConfigMapText}},
     "resources[2]: resource ConfigMap/cm from /k/base/cm.yaml is already defined in "
     "/k/base/cm.yaml"},
    // Malformed resources, with file and document.
    {"a document without kind",
     {{"kustomization.yaml", "resources:\n- bad.yaml\n"},
      {"bad.yaml", kConfigMapText + "---\napiVersion: v1\nmetadata: {name: x}\n"}},
     "bad.yaml: document 2: missing kind"},
    {"a document not a map",
     {{"kustomization.yaml", "resources:\n- bad.yaml\n"}, {"bad.yaml", "- a\n"}},
     "bad.yaml: document 1: expected a Kubernetes object"},
    {"a document without name",
     {{"kustomization.yaml", "resources:\n- bad.yaml\n"},
      {"bad.yaml", "kind: ConfigMap\napiVersion: v1\n"}},
     "missing metadata.name"},
    {"a document that does not parse",
     {{"kustomization.yaml", "resources:\n- bad.yaml\n"}, {"bad.yaml", "a: [\n"}},
     "bad.yaml:2:1:"},
    // A file outside the kustomization root.
    {"a file above the root",
     {{"sub/kustomization.yaml", "resources:\n- ../cm.yaml\n"}, {"cm.yaml", kConfigMapText}},
     "is not in or below"},
    // No kustomization file, or more than one.
    {"no kustomization file", {{"README", ""}}, "no kustomization.yaml"},
    {"two kustomization files",
     {{"kustomization.yaml", ""}, {"Kustomization", ""}},
     "more than one kustomization file"},
};

}  // namespace

TEST_CASE("build accumulates files, multi-document files, Lists and nested directories") {
  fluxop::MemoryFileSystem files = tree_at_k({
      {"kustomization.yaml", "resources:\n- cm.yaml\n- multi.yaml\n- list.yaml\n- base\n"},
      {"cm.yaml", kConfigMapText},
      {"multi.yaml",
       "apiVersion: v1\nkind: Service\nmetadata: {name: svc}\n---\n---\n"
       "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n"},
      {"list.yaml",
       "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n"
       "  metadata: {name: s}\n"},
      {"base/kustomization.yml", "namePrefix: b-\nresources:\n- sa.yaml\n"},
      {"base/sa.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}\n"},
  });
  auto resources = build("/k", files, nullptr);
  CHECK(ids(resources) == std::vector<std::string>{"Namespace/ns", "ServiceAccount/b-sa",
                                                   "ConfigMap/cm", "Secret/s", "Service/svc"});
}

TEST_CASE("build refuses what it does not support or cannot read, saying what") {
  for (const Refusal& refusal : kRefusals) {
    CAPTURE(refusal.what);
    fluxop::MemoryFileSystem files = tree_at_k(refusal.tree);
    // A kustomization in a subdirectory is built from there.
    std::string dir = refusal.tree.front().first.starts_with("sub/") ? "/k/sub" : "/k";
    CHECK_THROWS_WITH_AS(build(dir, files, nullptr), doctest::Contains(refusal.message.c_str()),
                         Error);
  }
}

// The engine reads only through its FileSystem: a tree in memory builds as
// the same tree on disk does, with the same rules.
TEST_CASE("build reads a kustomization tree held in memory") {
  fluxop::MemoryFileSystem files;
  files.add("/app/kustomization.yaml",
            "namespace: prod\nresources:\n- cm.yaml\n- base\npatches:\n- path: patch.yaml\n");
  files.add("/app/cm.yaml", std::string(kConfigMap));
  files.add("/app/patch.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"
            "data: {a: b}\n");
  files.add("/app/base/kustomization.yaml", "namePrefix: b-\nresources:\n- sa.yaml\n");
  files.add("/app/base/sa.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}\n");
  auto resources = build("/app", files, nullptr);
  CHECK(ids(resources) ==
        std::vector<std::string>{"ServiceAccount/prod/b-sa", "ConfigMap/prod/cm"});
  CHECK(resources[1].object().string_at({"data", "a"}) == "b");

  // Nothing of it is on disk.
  CHECK_THROWS_WITH_AS(build("/app", disk(), nullptr), doctest::Contains("/app: not a directory"),
                       Error);

  files.add("/outside.yaml", std::string(kConfigMap));
  files.add("/app/kustomization.yaml", "resources:\n- ../outside.yaml\n");
  CHECK_THROWS_WITH_AS(
      build("/app", files, nullptr),
      doctest::Contains("security; file '/outside.yaml' is not in or below '/app'"), Error);
  files.add("/app/kustomization.yaml", "resources:\n- base\n");
  files.add("/app/base/kustomization.yaml", "resources:\n- ../../app\n");
  CHECK_THROWS_WITH_AS(build("/app", files, nullptr), doctest::Contains("cycle detected"), Error);
  files.add("/app/kustomization.yaml", "resources:\n- missing.yaml\n");
  CHECK_THROWS_WITH_AS(
      build("/app", files, nullptr),
      doctest::Contains("resources[0]: no such file or directory: \"missing.yaml\""), Error);
}

TEST_CASE("a base several paths reach is the same in each, its references fixed in each copy") {
  fluxop::MemoryFileSystem files = tree_at_k({
      {"kustomization.yaml", "namespace: apps\nresources:\n- a\n- b\n- c\n"},
      {"a/kustomization.yaml", "namePrefix: a-\nresources:\n- ../base\n"},
      {"b/kustomization.yaml", "namePrefix: b-\nresources:\n- ../base\n"},
      {"c/kustomization.yaml", "namePrefix: c-\nresources:\n- ../base\n"},
      {"base/kustomization.yaml", "nameSuffix: -s\nresources:\n- objects.yaml\n"},
      {"base/objects.yaml", kConfigMapText +
                                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                                "spec:\n  volumes:\n  - name: v\n    configMap: {name: cm}\n"},
  });
  auto resources = build("/k", files, nullptr);
  // The legacy order: kind, then name.
  CHECK(ids(resources) == std::vector<std::string>{"ConfigMap/apps/a-cm-s", "ConfigMap/apps/b-cm-s",
                                                   "ConfigMap/apps/c-cm-s", "Pod/apps/a-p-s",
                                                   "Pod/apps/b-p-s", "Pod/apps/c-p-s"});
  for (std::size_t pod = 3; pod < 6; ++pod) {
    const auto& volumes = *resources[pod].object().find({"spec", "volumes"});
    CHECK(volumes.items()[0].string_at({"configMap", "name"}) == resources[pod - 3].name());
  }
}

TEST_CASE("a build reads at most 64 MiB in all, as each file is bounded") {
  fluxop::MemoryFileSystem files;
  std::string comment = "# " + std::string(std::size_t{25} << 20, 'x') + "\n";
  files.add("/k/kustomization.yaml", "resources:\n- a.yaml\n- b.yaml\n- c.yaml\n");
  for (const char* name : {"/k/a.yaml", "/k/b.yaml", "/k/c.yaml"}) files.add(name, comment);
  CHECK_THROWS_WITH_AS(
      build("/k", files, nullptr),
      "/k/kustomization.yaml: resources[2]: /k/c.yaml: the files of the build are larger "
      "than 64 MiB in all",
      Error);
  fluxop::BoundedReads bounded(files, 80);
  CHECK(bounded.read("/k/kustomization.yaml").size() == 38);
  CHECK_NOTHROW(bounded.read("/k/kustomization.yaml"));
  CHECK_THROWS_AS(bounded.read("/k/kustomization.yaml"), Error);
}
