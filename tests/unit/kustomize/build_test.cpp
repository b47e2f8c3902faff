#include "core/kustomize/build.h"

#include <doctest/doctest.h>

#include "../temp_dir.h"
#include "core/error.h"
#include "core/file_system.h"

namespace {

using fluxop::disk;
using fluxop::Error;
using fluxop::kustomize::build;
using fluxop::testing::TempDir;

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

}  // namespace

TEST_CASE("build accumulates files, multi-document files, Lists and nested directories") {
  TempDir dir;
  dir.write("kustomization.yaml", "resources:\n- cm.yaml\n- multi.yaml\n- list.yaml\n- base\n");
  dir.write("cm.yaml", kConfigMap);
  dir.write("multi.yaml",
            "apiVersion: v1\nkind: Service\nmetadata: {name: svc}\n---\n---\n"
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n");
  dir.write("list.yaml",
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n"
            "  metadata: {name: s}\n");
  dir.write("base/kustomization.yml", "namePrefix: b-\nresources:\n- sa.yaml\n");
  dir.write("base/sa.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}\n");
  auto resources = build(dir.str(), disk(), nullptr);
  CHECK(ids(resources) == std::vector<std::string>{"Namespace/ns", "ServiceAccount/b-sa",
                                                   "ConfigMap/cm", "Secret/s", "Service/svc"});
}

TEST_CASE("build refuses fields outside the subset, naming them") {
  TempDir dir;
  dir.write("kustomization.yaml", "resources: []\nconfigMapGenerator:\n- name: x\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       (dir.str() + "/kustomization.yaml: configMapGenerator: generators are not "
                                    "supported by fluxopctl")
                           .c_str(),
                       Error);
  dir.write("kustomization.yaml", "helmCharts: []\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("helmCharts: Helm charts are not supported"), Error);
  dir.write("kustomization.yaml", "components: [x]\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("components: components are not supported"), Error);
  dir.write("kustomization.yaml", "replacements: []\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("replacements: replacements are not"), Error);
  dir.write("kustomization.yaml", "resourcez: []\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("resourcez: unknown field"), Error);
  dir.write("kustomization.yaml", "kind: Component\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("kind: components are not supported"), Error);
  dir.write("kustomization.yaml", "apiVersion: v1\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("apiVersion: must be kustomize.config.k8s.io/v1beta1"),
                       Error);
  dir.write("kustomization.yaml", "sortOptions: {order: fifo}\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("sortOptions: only order: legacy"), Error);
}

TEST_CASE("build refuses remote resources, missing files and cycles") {
  TempDir dir;
  dir.write("kustomization.yaml", "resources:\n- https://github.com/org/repo//deploy?ref=v1\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("resources[0]: remote resources are not supported"),
                       Error);
  dir.write("kustomization.yaml", "resources:\n- missing.yaml\n");
  CHECK_THROWS_WITH_AS(
      build(dir.str(), disk(), nullptr),
      doctest::Contains("resources[0]: no such file or directory: \"missing.yaml\""), Error);
  dir.write("kustomization.yaml", "resources:\n- a\n");
  dir.write("a/kustomization.yaml", "resources:\n- ../a\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr), doctest::Contains("cycle detected"),
                       Error);
  dir.write("kustomization.yaml", "resources: cm.yaml\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("resources: must be a list"), Error);
}

TEST_CASE("build refuses duplicate ids, with both origins") {
  TempDir dir;
  dir.write("kustomization.yaml", "resources:\n- a.yaml\n- b.yaml\n");
  dir.write("a.yaml", kConfigMap);
  dir.write("b.yaml", std::string(kConfigMap) + "  namespace: default\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("resources[1]: resource ConfigMap/default/cm"), Error);
}

TEST_CASE("build reports malformed resources with file and document") {
  TempDir dir;
  dir.write("kustomization.yaml", "resources:\n- bad.yaml\n");
  dir.write("bad.yaml", std::string(kConfigMap) + "---\napiVersion: v1\nmetadata: {name: x}\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("bad.yaml: document 2: missing kind"), Error);
  dir.write("bad.yaml", "- a\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("bad.yaml: document 1: expected a Kubernetes object"),
                       Error);
  dir.write("bad.yaml", "kind: ConfigMap\napiVersion: v1\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("missing metadata.name"), Error);
  dir.write("bad.yaml", "a: [\n");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr), doctest::Contains("bad.yaml:2:1:"),
                       Error);
}

TEST_CASE("build refuses files outside the kustomization root") {
  TempDir dir;
  dir.write("cm.yaml", kConfigMap);
  dir.write("sub/kustomization.yaml", "resources:\n- ../cm.yaml\n");
  CHECK_THROWS_WITH_AS(build(dir.str() + "/sub", disk(), nullptr),
                       doctest::Contains("is not in or below"), Error);
}

TEST_CASE("build without a kustomization file says so") {
  TempDir dir;
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("no kustomization.yaml"), Error);
  dir.write("kustomization.yaml", "");
  dir.write("Kustomization", "");
  CHECK_THROWS_WITH_AS(build(dir.str(), disk(), nullptr),
                       doctest::Contains("more than one kustomization file"), Error);
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
