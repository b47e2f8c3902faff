#include "core/adopt/adopt.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../instance/support.h"
#include "../memory_dir.h"
#include "core/adopt/infer.h"
#include "core/error.h"
#include "core/labels.h"
#include "core/render/render.h"
#include "core/yaml/emit.h"
#include "core/yaml/parse.h"

namespace fluxop::adopt {
namespace {

using yaml::Node;

const std::string kGolden = FLUXOPCTL_TEST_DATA "/golden/distribution";

// What a bootstrap directory of the golden distribution's Flux v2.9.0 holds,
// made the way flux bootstrap writes it: the instance below rendered by the
// upstream CLI's rules, then what bootstrap writes differently (its version
// label, --events-addr through $(RUNTIME_NAMESPACE), the branch of the
// sync's GitRepository) and none of the operator's own labels.
constexpr std::string_view kBootstrapped = R"(apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
spec:
  distribution:
    version: "2.9.0"
    registry: ghcr.io/fluxcd
  components: [source-controller, kustomize-controller, helm-controller, notification-controller]
  cluster:
    networkPolicy: true
    domain: example.local
  sync:
    kind: GitRepository
    url: ssh://git@example.com/fleet.git
    ref: refs/heads/main
    path: ./clusters/one
    pullSecret: flux-system
)";

// `helm_version`: the version label of helm-controller's Deployment.
std::string bootstrap_components(std::string_view helm_version = "v2.9.0",
                                 std::string_view instance_text = kBootstrapped) {
  distribution::Distribution dist(kGolden);
  render::Rendered rendered =
      render::render(instance::testing::load(instance_text), dist, {.revision = false});
  std::string out;
  for (Node& object : rendered.objects) {
    Node* labels = object.find({"metadata", "labels"});
    labels->remove("fluxcd.controlplane.io/name");
    labels->remove("fluxcd.controlplane.io/namespace");
    labels->remove("app.kubernetes.io/managed-by");
    if (Node* annotations = object.find({"metadata", "annotations"})) {
      annotations->remove("fluxcd.controlplane.io/prune");
      if (annotations->size() == 0) object.get("metadata")->remove("annotations");
    }
    bool helm = object.string_at({"kind"}) == "Deployment" &&
                object.string_at({"metadata", "name"}) == "helm-controller";
    labels->set(kVersionLabel, Node::string(std::string(helm ? helm_version : "v2.9.0")));
    if (object.string_at({"kind"}) == "GitRepository") {
      Node ref = Node::map();
      ref.set("branch", Node::string("main"));
      object.get("spec")->set("ref", ref);
    }
    if (Node* containers = object.find({"spec", "template", "spec", "containers"})) {
      for (Node& arg : containers->items().front().get("args")->items()) {
        std::string text = arg.text();
        if (std::size_t at = text.find(".flux-system.svc");
            text.starts_with("--events-addr=") && at != std::string::npos) {
          arg = Node::string(text.replace(at + 1, 11, "$(RUNTIME_NAMESPACE)"));
        }
      }
    }
    out += "---\n" + yaml::emit(object);
  }
  return out;
}

// A bootstrap kustomization of gotk-components.yaml, its patches to follow.
constexpr std::string_view kPatchedKustomization = R"(apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- gotk-components.yaml
patches:
)";

distribution::Distribution golden() { return distribution::Distribution(kGolden); }

Adoption adopt_dir(const testing::MemoryDir& dir, const AdoptOptions& options = {}) {
  return adopt(read_directory(dir.str(), *dir.files(), nullptr), golden(), options);
}

testing::MemoryDir bootstrap_dir(std::string components = bootstrap_components(),
                                 std::string_view kustomization = {}) {
  testing::MemoryDir dir;
  dir.write("gotk-components.yaml", components);
  if (!kustomization.empty()) dir.write("kustomization.yaml", kustomization);
  return dir;
}

std::string error_of(const testing::MemoryDir& dir) {
  try {
    adopt_dir(dir);
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

std::string spec_at(const Adoption& adoption, std::initializer_list<std::string_view> path) {
  return adoption.instance.get("spec")->string_at(path);
}

std::vector<std::string> lost_fields(const Adoption& adoption) {
  std::vector<std::string> out;
  for (const FieldDifference* difference : adoption.lost()) {
    out.push_back(difference->object + " " + difference->path);
  }
  return out;
}

TEST_CASE("adopt: a bootstrap installation gives the instance that reproduces it") {
  Adoption adoption = adopt_dir(bootstrap_dir());
  CHECK(adoption.version == "v2.9.0");
  CHECK(spec_at(adoption, {"distribution", "version"}) == "2.9.0");
  CHECK(spec_at(adoption, {"distribution", "registry"}) == "ghcr.io/fluxcd");
  CHECK(spec_at(adoption, {"cluster", "domain"}) == "example.local");
  CHECK(adoption.instance.find({"spec", "cluster", "networkPolicy"})->text() == "true");
  CHECK(spec_at(adoption, {"sync", "ref"}) == "refs/heads/main");
  CHECK(spec_at(adoption, {"sync", "name"}) == "flux-system");
  CHECK(spec_at(adoption, {"sync", "pullSecret"}) == "flux-system");
  CHECK(adoption.instance.find({"spec", "components"})->size() == 4);
  CHECK(adoption.generated_patches == 0);
  CHECK(lost_fields(adoption).empty());
  CHECK(adoption.proof.installed_only.empty());
  CHECK(adoption.proof.compared > 10);
  // Each difference is one the operator always makes.
  std::vector<Expected> seen;
  for (const FieldDifference& difference : adoption.proof.fields) {
    REQUIRE(difference.expected);
    seen.push_back(*difference.expected);
  }
  for (Expected id :
       {Expected::operator_metadata, Expected::controller_arguments, Expected::git_reference}) {
    CHECK(std::count(seen.begin(), seen.end(), id) > 0);
  }
}

TEST_CASE("adopt: a hand edit is reproduced by a generated patch, and said") {
  std::string components = bootstrap_components();
  std::string limit = "- --log-encoding=json\n";
  std::size_t at = components.find(limit);
  REQUIRE(at != std::string::npos);
  components.insert(at + limit.size(), "        - --concurrent=12\n");
  Adoption adoption = adopt_dir(bootstrap_dir(components));
  CHECK(adoption.generated_patches == 1);
  REQUIRE(adoption.reproduced.size() == 1);
  CHECK(adoption.reproduced[0].path == "/spec/template/spec/containers/0/args");
  CHECK_FALSE(adoption.reproduced[0].configuration);
  CHECK(adoption.reproduced[0].installed->dump().find("--concurrent=12") != std::string::npos);
  CHECK(lost_fields(adoption).empty());
  const Node* patches = adoption.instance.find({"spec", "kustomize", "patches"});
  REQUIRE(patches);
  CHECK(patches->items().back().string_at({"target", "kind"}) == "Deployment");
}

TEST_CASE("adopt: the sync's duration written another way is the same, its settings carried") {
  std::string components = bootstrap_components();
  std::size_t at = components.find("\nkind: Kustomization\n");
  REQUIRE(at != std::string::npos);
  std::string interval = "  interval: 10m0s\n";
  std::size_t field = components.find(interval, at);
  REQUIRE(field != std::string::npos);
  components.replace(field, interval.size(), "  interval: 10m\n  wait: true\n");
  Adoption adoption = adopt_dir(bootstrap_dir(components));
  CHECK(lost_fields(adoption).empty());
  REQUIRE(adoption.reproduced.size() == 1);
  CHECK(adoption.reproduced[0].object == "Kustomization/flux-system/flux-system");
  CHECK(adoption.reproduced[0].path == "/spec/wait");
  CHECK(sync_setting(adoption.reproduced[0]));
  CHECK(adoption.generated_patches == 1);
}

TEST_CASE("adopt: the directory's patches are carried over and marked as configuration") {
  // Beside the bootstrap's files, a resource of the user's, which stays.
  testing::MemoryDir dir =
      bootstrap_dir(bootstrap_components(), R"(apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- gotk-components.yaml
- user.yaml
patches:
- patch: |
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --concurrent=20
  target:
    kind: Deployment
    name: (kustomize-controller|helm-controller)
- path: decryption.yaml
patchesStrategicMerge:
- |-
  apiVersion: source.toolkit.fluxcd.io/v1
  kind: GitRepository
  metadata:
    name: flux-system
    namespace: flux-system
  spec:
    timeout: 2m
)");
  dir.write("user.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: user\n  namespace: apps\n");
  dir.write("decryption.yaml", R"(apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  decryption:
    provider: sops
    secretRef:
      name: sops-gpg
)");
  Installation installation = read_directory(dir.str(), *dir.files(), nullptr);
  REQUIRE(installation.patches.size() == 3);
  CHECK(installation.patches[1].field == "kustomization.yaml: patches[1]");
  CHECK(installation.patches[1].patch.string_at({"patch"}).find("sops-gpg") != std::string::npos);
  Adoption adoption = adopt(installation, golden(), {});
  CHECK(adoption.carried_patches == 3);
  CHECK(adoption.generated_patches == 0);
  CHECK(lost_fields(adoption).empty());
  CHECK(adoption.instance.find({"spec", "kustomize", "patches"})->size() == 3);
  CHECK(adoption.patches_without_namespace == 0);  // flux-system is named as it is there
  CHECK(adoption.proof.installed_only.empty());
}

TEST_CASE("adopt: a patch naming the installation's namespace is carried without it") {
  // Installed in flux-other: the operator patches its manifests before it
  // sets that namespace, so a patch naming it would select nothing.
  std::string instance(kBootstrapped);
  instance.replace(instance.find("namespace: flux-system"), 22, "namespace: flux-other");
  Adoption adoption = adopt_dir(bootstrap_dir(bootstrap_components("v2.9.0", instance),
                                              std::string(kPatchedKustomization) + R"(- patch: |
    - op: add
      path: /spec/minReadySeconds
      value: 5
  target:
    kind: Deployment
    name: helm-controller
- patch: |
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: source-controller
      namespace: flux-other
    spec:
      minReadySeconds: 5
)"));
  CHECK(adoption.carried_patches == 2);
  CHECK(adoption.patches_without_namespace == 1);
  CHECK(lost_fields(adoption).empty());
  CHECK(adoption.generated_patches == 0);
}

TEST_CASE("adopt: the first of many directory patches that does not apply is named") {
  // The version label bootstrap wrote is in the installation; the operator
  // sets its own after the patches, so removing it does not apply to what
  // it renders. Found by halving the list: any one among 64.
  for (int bad : {0, 9, 41, 63}) {
    std::string kustomization(kPatchedKustomization);
    for (int i = 0; i < 64; ++i) {
      std::string operation =
          i == bad ? "remove\n      path: /metadata/labels/app.kubernetes.io~1version"
                   : "add\n      path: /metadata/labels/n" + std::to_string(i) + "\n      value: x";
      kustomization += "- patch: |\n    - op: " + operation +
                       "\n  target:\n    kind: Deployment\n    name: source-controller\n";
    }
    std::string error = error_of(bootstrap_dir(bootstrap_components(), kustomization));
    CAPTURE(error);
    CHECK(error.starts_with("kustomization.yaml: patches[" + std::to_string(bad) +
                            "]: does not apply to what the operator renders: "));
  }
}

TEST_CASE("adopt: what the server made of the manifests is no difference") {
  // A patch of the directory sets a CPU limit and an env var from a field;
  // live, the server wrote the limit in canonical form and filled in the
  // fieldRef's apiVersion (`adopt --from-cluster` reads them so).
  testing::MemoryDir dir =
      bootstrap_dir(bootstrap_components(), std::string(kPatchedKustomization) + R"(- patch: |
    - op: add
      path: /spec/template/spec/containers/0/resources
      value: {limits: {cpu: 1000m}}
    - op: add
      path: /spec/template/spec/containers/0/env
      value: [{name: NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}]
  target:
    kind: Deployment
    name: helm-controller
)");
  Installation installation = read_directory(dir.str(), *dir.files(), nullptr);
  bool found = false;
  for (Node& object : installation.objects) {
    if (object.string_at({"metadata", "name"}) != "helm-controller" ||
        object.string_at({"kind"}) != "Deployment") {
      continue;
    }
    Node& container = object.find({"spec", "template", "spec", "containers"})->items().front();
    container.find({"resources", "limits"})->set("cpu", Node::string("1"));
    container.get("env")
        ->items()
        .front()
        .find({"valueFrom", "fieldRef"})
        ->set("apiVersion", Node::string("v1"));
    found = true;
  }
  REQUIRE(found);
  Adoption adoption = adopt(installation, golden(), {});
  CHECK(adoption.carried_patches == 1);
  CHECK(adoption.generated_patches == 0);
  CHECK(adoption.reproduced.empty());
  CHECK(lost_fields(adoption).empty());

  // A limit that differs in value is still reproduced.
  for (Node& object : installation.objects) {
    if (object.string_at({"metadata", "name"}) == "helm-controller" &&
        object.string_at({"kind"}) == "Deployment") {
      object.find({"spec", "template", "spec", "containers"})
          ->items()
          .front()
          .find({"resources", "limits"})
          ->set("cpu", Node::string("2"));
    }
  }
  Adoption edited = adopt(installation, golden(), {});
  REQUIRE(edited.reproduced.size() == 1);
  CHECK(edited.reproduced[0].path == "/spec/template/spec/containers/0/resources/limits/cpu");
}

TEST_CASE("adopt: a patched field the render lacks is configuration, reproduced") {
  // A directory patch of a field that its carried copy cannot reach in the
  // render: the unpatched objects tell it from a hand edit.
  Installation installation =
      read_directory(bootstrap_dir().str(), *bootstrap_dir().files(), nullptr);
  installation.unpatched = installation.objects;
  for (Node& object : installation.objects) {
    if (object.string_at({"kind"}) == "Deployment" &&
        object.string_at({"metadata", "name"}) == "helm-controller") {
      object.get("spec")->set("replicas", Node::integer(0));
    }
  }
  Adoption adoption = adopt(installation, golden(), {});
  REQUIRE(adoption.reproduced.size() == 1);
  CHECK(adoption.reproduced[0].path == "/spec/replicas");
  CHECK(adoption.reproduced[0].configuration);
  CHECK(lost_fields(adoption).empty());
}

TEST_CASE("adopt: an object the render cannot make is named, not reproduced") {
  std::string components = bootstrap_components() + R"(---
apiVersion: v1
kind: ConfigMap
metadata:
  name: extra
  namespace: flux-system
data:
  a: b
)";
  Adoption adoption = adopt_dir(bootstrap_dir(components));
  REQUIRE(adoption.proof.installed_only.size() == 1);
  CHECK(adoption.proof.installed_only[0] == "ConfigMap/flux-system/extra");
}

TEST_CASE("adopt: --version-range is written, and must hold the version installed") {
  CHECK(spec_at(adopt_dir(bootstrap_dir(), {.version_range = "2.x"}),
                {"distribution", "version"}) == "2.x");
  try {
    adopt_dir(bootstrap_dir(), {.version_range = "2.8.x"});
    FAIL("no error");
  } catch (const Error& error) {
    CHECK(std::string(error.what()) ==
          "--version-range: \"2.8.x\" does not contain the version installed, v2.9.0");
  }
}

TEST_CASE("adopt: partial or invalid directories fail with one line") {
  testing::MemoryDir empty;
  empty.write("kustomization.yaml", "resources: []\n");
  CHECK(error_of(empty) ==
        "/mem: no gotk-components.yaml: not a directory written by flux bootstrap or flux "
        "install --export");

  std::string components = bootstrap_components();
  std::string other = components;
  for (std::size_t at = 0; (at = other.find("v2.9.0", at)) != std::string::npos;) {
    other.replace(at, 6, "v2.1.0");
  }
  CHECK(error_of(bootstrap_dir(other))
            .starts_with("/mem: Flux v2.1.0 is installed, which the distribution"));

  CHECK(error_of(bootstrap_dir(bootstrap_components("v2.8.0"))) ==
        "/mem: two Flux versions, v2.8.0 and v2.9.0");

  std::string elsewhere = components;
  for (std::size_t at = 0;
       (at = elsewhere.find("namespace: flux-system", at)) != std::string::npos;) {
    elsewhere.replace(at, 22, "namespace: flux-other");
  }
  CHECK(error_of(bootstrap_dir(components + elsewhere)) ==
        "/mem: two Flux installations, in flux-other and flux-system");

  CHECK(error_of(bootstrap_dir("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")) ==
        "/mem: no Flux controller Deployment (source-controller, kustomize-controller, ...)");
}

}  // namespace
}  // namespace fluxop::adopt
