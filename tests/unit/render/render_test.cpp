#include "core/render/render.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "../instance/support.h"
#include "../memory_dir.h"
#include "core/error.h"
#include "core/file.h"
#include "core/yaml/emit.h"

namespace fluxop::render {
namespace {

using instance::testing::kMinimal;
using instance::testing::load;

namespace fs = std::filesystem;

const std::string kGolden = FLUXOPCTL_TEST_DATA "/golden/distribution";

// The golden distribution held in memory, its one version directory
// (flux/v2.9.0) under each name of `versions`.
testing::MemoryDir golden_as(const std::vector<std::string>& versions) {
  const std::string kGoldenVersion = "flux/v2.9.0/";
  testing::MemoryDir dir;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(kGolden)) {
    if (!entry.is_regular_file()) continue;
    std::string path = fs::relative(entry.path(), kGolden).string();
    std::string text = read_input_file(entry.path().string());
    if (!path.starts_with(kGoldenVersion)) {
      dir.write(path, text);
      continue;
    }
    for (const std::string& version : versions)
      dir.write("flux/" + version + "/" + path.substr(kGoldenVersion.size()), text);
  }
  return dir;
}

distribution::Distribution open(const testing::MemoryDir& dir) {
  return distribution::directory_distribution(dir.str(), dir.files());
}

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
  CHECK(rendered.version.original == "v2.9.0");
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

TEST_CASE("render: an empty sharding key selects on the default key, as upstream does") {
  Rendered rendered = render_spec("  sharding:\n    key: \"\"\n    shards: [s1]\n");
  CHECK(has_arg(find(rendered, "Deployment", "source-controller"),
                "--watch-label-selector=!sharding.fluxcd.io/key"));
  CHECK(has_arg(find(rendered, "Deployment", "source-controller-s1"),
                "--watch-label-selector=sharding.fluxcd.io/key=s1"));
}

TEST_CASE("render: a shard whose names would pass 63 characters is refused before the render") {
  // A DNS label of 63 characters, valid as a shard name, makes
  // source-controller-<shard> (81 characters), a Service name the API
  // server refuses.
  std::string shard(63, 'a');
  std::string error =
      error_of("  components: [source-controller]\n  sharding:\n    shards: [ok, " + shard + "]\n");
  CHECK(error.find("instance.yaml: .spec.sharding.shards[1]: makes the name \"source-controller-" +
                   shard.substr(0, 22)) == 0);
  CHECK(error.find("(81 characters), longer than the 63") != std::string::npos);
  CHECK(error.find("at most 45 characters with source-controller") != std::string::npos);
  // The longest component decides: 45 characters pass with source-controller
  // alone, not with kustomize-controller.
  std::string longest_allowed(45, 'b');
  CHECK(error_of("  components: [source-controller]\n  sharding:\n    shards: [" + longest_allowed +
                 "]\n") == "no error");
  CHECK(error_of("  components: [source-controller, kustomize-controller]\n  sharding:\n"
                 "    shards: [" +
                 longest_allowed + "]\n")
            .find("at most 42 characters with kustomize-controller") != std::string::npos);
}

TEST_CASE("render: workload identity needs Flux 2.6, multitenant workload identity 2.7") {
  distribution::Distribution dist = open(golden_as({"v2.6.1", "v2.5.0"}));
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

// The golden distribution with an image catalog for the operator's variant;
// helm-controller is missing from it.
struct OperatorDistribution {
  distribution::Distribution dist = open(with_catalog());
  static testing::MemoryDir with_catalog() {
    testing::MemoryDir dir = golden_as({"v2.9.0"});
    dir.write("flux-images/v2.9.0/enterprise-distroless.yaml",
              "images:\n"
              "  - name: ghcr.io/controlplaneio-fluxcd/distroless/source-controller\n"
              "    newTag: v1.9.1\n    digest: sha256:" +
                  std::string(64, 'a') +
                  "\n"
                  "  - name: ghcr.io/controlplaneio-fluxcd/distroless/kustomize-controller\n"
                  "    newTag: v1.9.2\n    digest: sha256:" +
                  std::string(64, 'b') + "\n");
    return dir;
  }
  Rendered render_spec(const std::string& spec, Mode mode = Mode::operator_controller) {
    return render(load(std::string(kMinimal) + spec), dist, {.mode = mode});
  }
};

std::string image(const Rendered& rendered, std::string_view deployment) {
  return find(rendered, "Deployment", deployment)
      .find({"spec", "template", "spec", "containers"})
      ->items()
      .front()
      .string_at({"image"});
}

TEST_CASE("render: the operator pins images by the digests of the variant's catalog") {
  OperatorDistribution operator_dist;
  std::string two = "  components: [source-controller, kustomize-controller]\n";
  std::string variant = "    variant: enterprise-distroless\n";
  Rendered pinned = operator_dist.render_spec(variant + two);
  CHECK(pinned.warnings.empty());
  CHECK(image(pinned, "source-controller") ==
        "ghcr.io/fluxcd/source-controller:v1.9.1@sha256:" + std::string(64, 'a'));
  CHECK(image(pinned, "kustomize-controller") ==
        "ghcr.io/fluxcd/kustomize-controller:v1.9.2@sha256:" + std::string(64, 'b'));
  // The registry names the variant when none is given; the CLI's rendering
  // keeps the manifests' tags.
  std::string distroless = "    registry: ghcr.io/controlplaneio-fluxcd/distroless\n";
  auto with_registry = [&](const std::string& registry, Mode mode) {
    std::string text = std::string(kMinimal) + two;
    text.replace(text.find("    registry: ghcr.io/fluxcd\n"), 29, registry);
    return render(load(text), operator_dist.dist, {.mode = mode});
  };
  CHECK(image(with_registry(distroless, Mode::operator_controller), "source-controller") ==
        "ghcr.io/controlplaneio-fluxcd/distroless/source-controller:v1.9.1@sha256:" +
            std::string(64, 'a'));
  CHECK(image(with_registry(distroless, Mode::cli), "source-controller") ==
        "ghcr.io/controlplaneio-fluxcd/distroless/source-controller:v1.9.0");
  // The digests change the revision, as they change the objects.
  CHECK(pinned.revision != operator_dist.render_spec(variant + two, Mode::cli).revision);
}

TEST_CASE("render: without a catalog that fits, the operator renders the tags and says why") {
  OperatorDistribution operator_dist;
  // No upstream-alpine catalog in this distribution.
  Rendered untagged = operator_dist.render_spec("  components: [source-controller]\n");
  CHECK(image(untagged, "source-controller") == "ghcr.io/fluxcd/source-controller:v1.9.0");
  REQUIRE(untagged.warnings.size() == 1);
  CHECK(untagged.warnings[0].starts_with("instance.yaml: images are not pinned by digest ("));
  CHECK(untagged.warnings[0].find("upstream-alpine.yaml") != std::string::npos);
  // A catalog without one of the components.
  Rendered partial = operator_dist.render_spec(
      "    variant: enterprise-distroless\n  components: [source-controller, helm-controller]\n");
  CHECK(image(partial, "source-controller") == "ghcr.io/fluxcd/source-controller:v1.9.0");
  REQUIRE(partial.warnings.size() == 1);
  CHECK(partial.warnings[0].find("no image for helm-controller") != std::string::npos);
  // A registry the operator knows no variant for.
  std::string text = std::string(kMinimal) + "  components: [source-controller]\n";
  text.replace(text.find("ghcr.io/fluxcd"), 14, "registry.example.com/flux");
  Rendered mirror = render(load(text), operator_dist.dist, {.mode = Mode::operator_controller});
  REQUIRE(mirror.warnings.size() == 1);
  CHECK(mirror.warnings[0].find("registry.example.com/flux") != std::string::npos);
}

TEST_CASE("render: the operator reads networkPolicy with the CRD's default") {
  OperatorDistribution operator_dist;
  CHECK(has_kind(operator_dist.render_spec("  cluster:\n    type: kubernetes\n"), "NetworkPolicy"));
  CHECK_FALSE(has_kind(operator_dist.render_spec("  cluster:\n    networkPolicy: false\n"),
                       "NetworkPolicy"));
  CHECK(has_kind(operator_dist.render_spec(""), "NetworkPolicy"));
}

TEST_CASE("render: with persistent shard storage, each shard's source-controller has a claim") {
  OperatorDistribution operator_dist;
  std::string spec =
      "  components: [source-controller, kustomize-controller]\n"
      "  storage:\n    class: standard\n    size: 10Gi\n"
      "  sharding:\n    shards: [s1, s2]\n    storage: persistent\n";
  Rendered rendered = operator_dist.render_spec(spec);
  for (std::string shard : {"s1", "s2"}) {
    const yaml::Node& claim = find(rendered, "PersistentVolumeClaim", "source-controller-" + shard);
    CHECK(claim.string_at({"metadata", "namespace"}) == "flux-system");
    CHECK(claim.string_at({"metadata", "annotations", "sharding.fluxcd.io/role"}) == "shard");
    CHECK(claim.string_at({"spec", "resources", "requests", "storage"}) == "10Gi");
    const yaml::Node& pod = *find(rendered, "Deployment", "source-controller-" + shard)
                                 .find({"spec", "template", "spec"});
    CHECK(
        pod.find({"volumes"})->items().front().string_at({"persistentVolumeClaim", "claimName"}) ==
        "source-controller-" + shard);
    const yaml::Node& mount =
        pod.find({"containers"})->items().front().find({"volumeMounts"})->items().front();
    CHECK(mount.string_at({"name"}) == "persistent-data-" + shard);
    CHECK(mount.string_at({"mountPath"}) == "/data");
  }
  // The main set keeps its claim; ephemeral shards and the CLI have none.
  CHECK(find(rendered, "PersistentVolumeClaim", "source-controller")
            .string_at({"metadata", "name"}) == "source-controller");
  auto claims = [](const Rendered& r) {
    return std::count_if(r.objects.begin(), r.objects.end(), [](const yaml::Node& o) {
      return o.string_at({"kind"}) == "PersistentVolumeClaim";
    });
  };
  CHECK(claims(rendered) == 3);
  CHECK(claims(operator_dist.render_spec(spec, Mode::cli)) == 1);
  std::string ephemeral = spec;
  ephemeral.replace(ephemeral.find("persistent"), 10, "ephemeral");
  CHECK(claims(operator_dist.render_spec(ephemeral)) == 1);
}

TEST_CASE("render: the operator refuses an aws GitRepository sync before Flux 2.9") {
  distribution::Distribution dist = open(golden_as({"v2.8.0"}));
  std::string text = std::string(kMinimal) +
                     "  components: [source-controller]\n"
                     "  sync:\n    kind: GitRepository\n    url: https://example.com/repo.git\n"
                     "    ref: refs/heads/main\n    path: clusters/a\n    provider: aws\n";
  CHECK_THROWS_WITH(render(load(text), dist, {.mode = Mode::operator_controller}),
                    "instance.yaml: .spec.sync.provider: aws needs Flux 2.9.0 or later for a "
                    "GitRepository, not v2.8.0");
  CHECK_NOTHROW(render(load(text), dist, {.mode = Mode::cli}));
}

}  // namespace
}  // namespace fluxop::render
