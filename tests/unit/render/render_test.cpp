#include "core/render/render.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "../instance/support.h"
#include "../temp_dir.h"
#include "core/error.h"
#include "core/yaml/emit.h"

namespace fluxop::render {
namespace {

using instance::testing::kMinimal;
using instance::testing::load;

namespace fs = std::filesystem;

const std::string kGolden = FLUXOPCTL_TEST_DATA "/golden/distribution";

Rendered render_spec(const std::string& spec) {
  distribution::Distribution dist(kGolden);
  return render(load(std::string(kMinimal) + spec), dist);
}

std::string error_of(const std::string& spec) {
  try {
    render_spec(spec);
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

bool has_kind(const Rendered& rendered, std::string_view kind) {
  return std::any_of(rendered.objects.begin(), rendered.objects.end(),
                     [&](const yaml::Node& o) { return o.string_at({"kind"}) == kind; });
}

const yaml::Node& find(const Rendered& rendered, std::string_view kind, std::string_view name) {
  for (const yaml::Node& object : rendered.objects) {
    if (object.string_at({"kind"}) == kind && object.string_at({"metadata", "name"}) == name) {
      return object;
    }
  }
  FAIL("no " << kind << "/" << name);
  throw;
}

std::vector<std::string> args(const yaml::Node& deployment) {
  std::vector<std::string> out;
  const yaml::Node* containers = deployment.find({"spec", "template", "spec", "containers"});
  for (const yaml::Node& arg : containers->items().front().get("args")->items()) {
    out.push_back(arg.text());
  }
  return out;
}

bool has_arg(const yaml::Node& deployment, std::string_view arg) {
  std::vector<std::string> list = args(deployment);
  return std::find(list.begin(), list.end(), arg) != list.end();
}

TEST_CASE("render: revision is the version and a SHA-256 digest of the kustomize output") {
  Rendered rendered = render_spec("");
  CHECK(rendered.version == "v2.9.0");
  CHECK(rendered.revision.starts_with("v2.9.0@sha256:"));
  CHECK(rendered.revision.size() == std::string("v2.9.0@sha256:").size() + 64);
  // Common metadata is set after the digest: it does not change the revision.
  Rendered labelled = render_spec("  commonMetadata:\n    labels:\n      team: a\n");
  CHECK(labelled.revision == rendered.revision);
  CHECK(render_spec("  components: [source-controller]\n").revision != rendered.revision);
}

TEST_CASE("render: network policies follow the upstream CLI's reading of .spec.cluster") {
  CHECK(has_kind(render_spec(""), "NetworkPolicy"));
  CHECK_FALSE(has_kind(render_spec("  cluster:\n    type: kubernetes\n"), "NetworkPolicy"));
  CHECK(has_kind(render_spec("  cluster:\n    networkPolicy: true\n"), "NetworkPolicy"));
  CHECK_FALSE(has_kind(render_spec("  cluster:\n    networkPolicy: false\n"), "NetworkPolicy"));
}

TEST_CASE("render: size profiles and the common pod template settings") {
  Rendered plain = render_spec("  components: [kustomize-controller]\n");
  const yaml::Node& deployment = find(plain, "Deployment", "kustomize-controller");
  CHECK(deployment.string_at({"spec", "template", "metadata", "annotations",
                              "cluster-autoscaler.kubernetes.io/safe-to-evict"}) == "true");
  CHECK(deployment.find({"metadata", "annotations", "fluxcd.controlplane.io/profile"}) == nullptr);

  Rendered large =
      render_spec("  components: [kustomize-controller]\n  cluster:\n    size: large\n");
  const yaml::Node& tuned = find(large, "Deployment", "kustomize-controller");
  CHECK(tuned.string_at({"metadata", "annotations", "fluxcd.controlplane.io/profile"}) == "large");
  CHECK(has_arg(tuned, "--concurrent=20"));
}

TEST_CASE("render: sharding adds a controller set per shard and selectors on both sides") {
  Rendered rendered = render_spec(
      "  components: [source-controller, notification-controller]\n"
      "  sharding:\n    key: example.com/shard\n    shards: [s1, s2]\n");
  CHECK(has_arg(find(rendered, "Deployment", "source-controller"),
                "--watch-label-selector=!example.com/shard"));
  CHECK(has_arg(find(rendered, "Deployment", "source-controller-s2"),
                "--watch-label-selector=example.com/shard=s2"));
  CHECK_FALSE(has_arg(find(rendered, "Deployment", "source-controller-s2"),
                      "--watch-label-selector=!example.com/shard"));
  CHECK(find(rendered, "Service", "source-controller-s1").string_at({"spec", "selector", "app"}) ==
        "source-controller-s1");
  // notification-controller is not sharded.
  CHECK_FALSE(std::any_of(rendered.objects.begin(), rendered.objects.end(), [](const auto& o) {
    return o.string_at({"metadata", "name"}) == "notification-controller-s1";
  }));
}

TEST_CASE("render: workload identity needs Flux 2.6, multitenant workload identity 2.7") {
  testing::TempDir dir;
  fs::copy(kGolden, dir.path(), fs::copy_options::recursive);
  fs::rename(dir.path() / "flux/v2.9.0", dir.path() / "flux/v2.6.1");
  fs::copy(dir.path() / "flux/v2.6.1", dir.path() / "flux/v2.5.0", fs::copy_options::recursive);
  distribution::Distribution dist(dir.str());
  auto error_for = [&](const std::string& version, const std::string& cluster) {
    // Without notification-controller, whose CRDs here have one version only.
    std::string text =
        std::string(kMinimal) + "  components: [source-controller]\n  cluster:\n" + cluster;
    text.replace(text.find("\"2.x\""), 5, "\"" + version + "\"");
    try {
      render(load(text), dist);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK(error_for("2.5.x", "    objectLevelWorkloadIdentity: true\n")
            .starts_with("instance.yaml: .spec.cluster.objectLevelWorkloadIdentity: "));
  CHECK(error_for("2.6.x", "    objectLevelWorkloadIdentity: true\n") == "no error");
  CHECK(error_for("2.6.x",
                  "    objectLevelWorkloadIdentity: true\n    multitenantWorkloadIdentity: true\n")
            .starts_with("instance.yaml: .spec.cluster.multitenantWorkloadIdentity: "));
  CHECK(error_for("2.1.x", "    type: kubernetes\n")
            .starts_with("instance.yaml: .spec.distribution.version: "));
}

TEST_CASE("render: errors name the instance file and field") {
  CHECK(error_of("") == "no error");
  std::string patch_error = error_of(
      "  kustomize:\n    patches:\n    - target:\n        kind: Deployment\n"
      "      patch: |\n        - op: replace\n          path: /spec/missing/field\n"
      "          value: x\n");
  CHECK(patch_error.starts_with("instance.yaml: .spec.kustomize.patches[0]: "));
  CHECK(patch_error.find("/spec/missing/field") != std::string::npos);
}

// The user's patches are compiled where they are read: the field named is
// theirs, never an index in a kustomization they did not write.
TEST_CASE("render: a bad target of a user patch names its field") {
  std::string valid =
      "    - patch: |\n        - op: add\n          path: /spec/replicas\n"
      "          value: 1\n      target:\n        kind: Deployment\n";
  auto error_for = [&](const std::string& target) {
    return error_of("  kustomize:\n    patches:\n" + valid +
                    "    - patch: |\n        - op: add\n          path: /spec/replicas\n"
                    "          value: 1\n      target:\n" +
                    target);
  };
  CHECK(error_for("        kind: Deployment\n") == "no error");
  CHECK(error_for("        name: \"(\"\n") ==
        "instance.yaml: .spec.kustomize.patches[1].target.name: invalid regular expression "
        "\"(\": unbalanced parentheses (rendering Flux v2.9.0)");
  CHECK(error_for("        labelSelector: \"a in b\"\n")
            .starts_with("instance.yaml: .spec.kustomize.patches[1].target.labelSelector: "
                         "invalid selector"));
  CHECK(error_for("        annotationSelector: \"=x\"\n")
            .starts_with("instance.yaml: .spec.kustomize.patches[1].target.annotationSelector: "));
  CHECK(error_of("  kustomize:\n    patches:\n    - patch: \"[\"\n      target:\n"
                 "        kind: Deployment\n")
            .starts_with("instance.yaml: .spec.kustomize.patches[0]: a patch starting with "));
}

TEST_CASE("render: the revision is computed only when asked") {
  distribution::Distribution dist(kGolden);
  Rendered rendered = render(load(std::string(kMinimal)), dist, {.revision = false});
  CHECK(rendered.revision.empty());
  CHECK(yaml::emit_stream(rendered.objects) == yaml::emit_stream(render_spec("").objects));
}

}  // namespace
}  // namespace fluxop::render
