// The reconcile pipeline end to end on a cluster in memory: the pull secret
// read from the cluster and handed to the artifact port, the render of a
// small distribution, the apply or its plan, and the failures classified.
#include "core/reconcile/pipeline.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "../instance/support.h"
#include "../kube/fake_cluster.h"
#include "core/base64.h"
#include "core/file_system.h"
#include "core/reconcile/shared_render.h"
#include "core/reconcile/status.h"
#include "core/signatures/image_signatures.h"

namespace fluxop::reconcile {
namespace {

using nlohmann::json;
using testing::FakeCluster;

const std::string kDistribution = FLUXOPCTL_TEST_DATA "/golden/distribution";

// Artifacts in memory: each URL a distribution and a digest; every pull and
// the credential it was given recorded.
class FakeArtifacts final : public ArtifactPort {
 public:
  std::map<std::string, std::string> digests;  // url -> digest; the distribution is kDistribution
  std::optional<std::string> default_digest;   // the default artifact, as last pulled
  std::vector<std::string> pulls;              // "url user:password"
  // Pulls that give a distribution a render cannot read, as a cached layer
  // found damaged as it is read does (and whose entry it removed, when set).
  int damaged_pulls = 0;
  bool damaged_removed = true;
  // Offered to the pull's meanwhile before it answers, as a tag's last
  // artifact is; and the files the answer reads, when set.
  std::optional<PulledDistribution> likely;
  std::shared_ptr<const FileSystem> answer_files;

  PulledDistribution pull(
      std::string_view url, std::string_view origin, const RegistryCredentials& credentials,
      const std::function<void(const PulledDistribution&)>& meanwhile) override {
    oci::Credential credential;
    if (credentials) credential = credentials("registry.example");
    pulls.push_back(std::string(url) + " " + credential.username + ":" + credential.password);
    auto found = digests.find(std::string(url));
    if (found == digests.end())
      throw Error(std::string(origin) + ": " + std::string(url) + ": not found");
    if (likely && meanwhile) meanwhile(*likely);
    if (damaged_pulls > 0) {
      --damaged_pulls;
      return {distribution::Distribution(FLUXOPCTL_TEST_DATA "/distribution/fake"), found->second,
              [this] { return damaged_removed; }};
    }
    if (answer_files)
      return {distribution::directory_distribution(kDistribution, answer_files), found->second};
    return {distribution::Distribution(kDistribution), found->second};
  }
  std::optional<PulledDistribution> pulled_default() override {
    if (!default_digest) return std::nullopt;
    return PulledDistribution{distribution::Distribution(kDistribution), *default_digest};
  }

  // --verify when set: oci://repository -> the digest its signature is of;
  // a repository not there has no signature.
  std::optional<std::map<std::string, std::string>> signed_images;
  std::vector<std::string> verified;  // "oci://... <default identity>"
  std::mutex verified_mutex;
  std::condition_variable asked;
  int in_flight = 0;
  std::optional<int> wait_together;
  bool asked_together = true;
  std::optional<std::string> verify_image(const oci::Reference& image,
                                          std::string_view default_identity) override {
    if (!signed_images) return std::nullopt;
    {
      // Images are verified on several threads at once.
      std::unique_lock<std::mutex> held(verified_mutex);
      verified.push_back(image.str() + " " + std::string(default_identity));
      ++in_flight;
      asked.notify_all();
      // With wait_together, each answer waits until that many are asked.
      if (wait_together && !asked.wait_for(held, std::chrono::seconds(60),
                                           [&] { return in_flight >= *wait_together; }))
        asked_together = false;
    }
    auto found = signed_images->find("oci://" + image.registry + "/" + image.repository);
    if (found == signed_images->end())
      throw Error(image.str() + ": no signature (expected identity " +
                  std::string(default_identity) + ")");
    return found->second;
  }
};

constexpr std::string_view kSpec = R"(  wait: false
  components: [source-controller, kustomize-controller]
)";

instance::FluxInstance flux_instance(std::string_view distribution_extra = "") {
  std::string text(instance::testing::kMinimal);
  std::string_view registry = "    registry: ghcr.io/fluxcd\n";
  text.insert(text.find(registry) + registry.size(), distribution_extra);
  return instance::testing::load(text + std::string(kSpec));
}

RenderRequest request() {
  RenderRequest request;
  request.artifact = kDistribution;
  return request;
}

void serve_flux_kinds(FakeCluster& cluster) {
  for (const char* kind :
       {"fluxcd.controlplane.io/v1/FluxInstance", "/v1/Secret",
        "rbac.authorization.k8s.io/v1/ClusterRole",
        "rbac.authorization.k8s.io/v1/ClusterRoleBinding", "networking.k8s.io/v1/NetworkPolicy"}) {
    cluster.served.insert(kind);
  }
}

void put_pull_secret(FakeCluster& cluster) {
  json config = {
      {"auths", {{"registry.example", {{"username", "robot"}, {"password", "s3cret"}}}}}};
  cluster.put({{"apiVersion", "v1"},
               {"kind", "Secret"},
               {"type", "kubernetes.io/dockerconfigjson"},
               {"metadata", {{"name", "pull"}, {"namespace", "flux-system"}}},
               {"data", {{".dockerconfigjson", base64_encode(config.dump())}}}});
}

ApplyOptions quick() {
  ApplyOptions options;
  options.timeout = std::chrono::seconds(1);
  return options;
}

TEST_CASE("the pipeline renders a directory distribution and applies it") {
  FakeCluster cluster;
  serve_flux_kinds(cluster);
  FakeArtifacts artifacts;
  std::string said;
  Reconciliation run = reconcile_instance(
      cluster, artifacts, flux_instance(), request(), quick(),
      [&](const RenderedInstance& rendered) {
        said = rendered.rendered.revision;
        CHECK(cluster.objects.count("Deployment/flux-system/source-controller") == 0);
      });
  CHECK(artifacts.pulls.empty());
  CHECK(run.instance.artifact_digest.empty());
  CHECK(said == run.result.revision);
  CHECK(cluster.objects.count("Deployment/flux-system/source-controller") == 1);
  CHECK(cluster.objects.count("Deployment/flux-system/kustomize-controller") == 1);
  CHECK(cluster.objects.count("Deployment/flux-system/helm-controller") == 0);
  const json& status = cluster.objects.at("FluxInstance/flux-system/flux")["status"];
  CHECK(status["lastAppliedRevision"] == run.result.revision);
  CHECK_FALSE(status.contains("lastArtifactRevision"));
}

TEST_CASE("the pipeline records its events in the operator's order, the outdated version first") {
  FakeCluster cluster;
  serve_flux_kinds(cluster);
  FakeArtifacts artifacts;
  RenderedInstance instance = render_instance(artifacts, flux_instance(), request());
  const render::Rendered newest = instance.rendered;  // v2.9.0, the distribution's newest
  // What an instance pinned to an older minor renders.
  auto render_older = [&] {
    instance.rendered.version = *distribution::parse_version("v2.8.0");
    instance.rendered.revision = "v2.8.0" + newest.revision.substr(newest.revision.find('@'));
  };
  render_older();
  std::vector<std::string> events;  // "<type> <reason>: <message>"
  ApplyOptions apply = quick();
  apply.on_event = [&](const InstanceEvent& event) {
    events.push_back(std::string(name(event_type(event.reason))) + " " +
                     std::string(name(event.reason)) + ": " + event.message);
  };
  std::string finished = apply_rendered(cluster, instance, apply).message;
  std::vector<std::string> first = {
      "Normal OutdatedVersion: Flux v2.8.0 is outdated, the latest stable version is v2.9.0",
      "Normal Progressing: Installing revision " + instance.rendered.revision,
      "Normal ReconciliationSucceeded: " + finished};
  CHECK(events == first);
  // The same revision again: outdated still, nothing in progress.
  events.clear();
  finished = apply_rendered(cluster, instance, apply).message;
  CHECK(events ==
        std::vector<std::string>{first[0], "Normal ReconciliationSucceeded: " + finished});
  // The newest minor: not outdated.
  events.clear();
  instance.rendered = newest;
  finished = apply_rendered(cluster, instance, apply).message;
  CHECK(events ==
        std::vector<std::string>{"Normal Progressing: Upgrading to revision " + newest.revision,
                                 "Normal ReconciliationSucceeded: " + finished});
  // A dry run records none.
  FakeCluster dry_run(/*dry_run=*/true);
  serve_flux_kinds(dry_run);
  events.clear();
  render_older();
  apply_rendered(dry_run, instance, apply);
  CHECK(events.empty());
}

TEST_CASE("the pipeline pulls an oci:// artifact with the instance's pull secret") {
  FakeCluster cluster;
  serve_flux_kinds(cluster);
  put_pull_secret(cluster);
  FakeArtifacts artifacts;
  artifacts.digests["oci://registry.example/flux-manifests:latest"] = "sha256:abc";
  RenderRequest from_instance = request();
  from_instance.artifact.clear();
  Reconciliation run = reconcile_instance(
      cluster, artifacts,
      flux_instance("    artifact: oci://registry.example/flux-manifests:latest\n"
                    "    artifactPullSecret: pull\n"),
      from_instance, quick(), {});
  CHECK(artifacts.pulls ==
        std::vector<std::string>{"oci://registry.example/flux-manifests:latest robot:s3cret"});
  CHECK(run.instance.artifact_digest == "sha256:abc");
  CHECK(cluster.objects.at("FluxInstance/flux-system/flux")["status"]["lastArtifactRevision"] ==
        "sha256:abc");
}

TEST_CASE("a fleet's clusters share one pull and one render, the first asking doing it") {
  std::vector<std::unique_ptr<FakeCluster>> clusters;
  for (int i = 0; i < 4; ++i) {
    FakeCluster& cluster = *clusters.emplace_back(std::make_unique<FakeCluster>());
    serve_flux_kinds(cluster);
    put_pull_secret(cluster);
  }
  FakeArtifacts artifacts;
  artifacts.digests["oci://registry.example/flux-manifests:latest"] = "sha256:abc";
  RenderRequest from_instance = request();
  from_instance.artifact.clear();
  int heard = 0;
  SharedRender render(artifacts,
                      flux_instance("    artifact: oci://registry.example/flux-manifests:latest\n"
                                    "    artifactPullSecret: pull\n"),
                      from_instance, [&](const RenderedInstance&) { ++heard; });
  std::vector<std::string> revisions(clusters.size());
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < clusters.size(); ++i) {
      threads.emplace_back([&, i] {
        revisions[i] =
            render.get([&]() -> kube::Cluster& { return *clusters[i]; }).rendered.revision;
      });
    }
  }
  CHECK(artifacts.pulls.size() == 1);
  CHECK(heard == 1);
  for (const std::string& revision : revisions) CHECK(revision == revisions[0]);
  CHECK_FALSE(revisions[0].empty());
}

TEST_CASE("a fleet's render: a cluster whose pull secret cannot be read fails alone") {
  FakeCluster without_secret;
  FakeCluster with_secret;
  serve_flux_kinds(without_secret);
  serve_flux_kinds(with_secret);
  put_pull_secret(with_secret);
  FakeArtifacts artifacts;
  artifacts.digests["oci://registry.example/flux-manifests:latest"] = "sha256:abc";
  RenderRequest from_instance = request();
  from_instance.artifact.clear();
  SharedRender render(artifacts,
                      flux_instance("    artifact: oci://registry.example/flux-manifests:latest\n"
                                    "    artifactPullSecret: pull\n"),
                      from_instance);
  CHECK_THROWS(render.get([&]() -> kube::Cluster& { return without_secret; }));
  CHECK(render.get([&]() -> kube::Cluster& { return with_secret; }).artifact_digest ==
        "sha256:abc");

  // A render that fails fails every cluster, and is tried once.
  FakeArtifacts missing;
  SharedRender broken(missing,
                      flux_instance("    artifact: oci://registry.example/missing:latest\n"),
                      from_instance);
  CHECK_THROWS_AS(broken.get([&]() -> kube::Cluster& { return with_secret; }), ReconcileError);
  CHECK_THROWS_AS(broken.get([&]() -> kube::Cluster& { return without_secret; }), ReconcileError);
  CHECK(missing.pulls.size() == 1);
}

TEST_CASE("the pipeline classifies what fails before the apply, and writes nothing") {
  FakeCluster cluster;
  serve_flux_kinds(cluster);
  FakeArtifacts artifacts;
  RenderRequest from_instance = request();
  from_instance.artifact.clear();
  SUBCASE("an artifact that cannot be pulled: ArtifactFailed") {
    try {
      reconcile_instance(cluster, artifacts,
                         flux_instance("    artifact: oci://registry.example/missing:1\n"),
                         from_instance, quick(), {});
      FAIL("no error");
    } catch (const ReconcileError& e) {
      CHECK(e.failure() == Failure::artifact);
      CHECK(std::string(e.what()).find("instance.yaml: .spec.distribution.artifact: ") == 0);
    }
  }
  SUBCASE("a pull secret that is not there: ArtifactFailed") {
    artifacts.digests["oci://registry.example/flux-manifests:latest"] = "sha256:abc";
    try {
      reconcile_instance(
          cluster, artifacts,
          flux_instance("    artifact: oci://registry.example/flux-manifests:latest\n"
                        "    artifactPullSecret: absent\n"),
          from_instance, quick(), {});
      FAIL("no error");
    } catch (const ReconcileError& e) {
      CHECK(name(e.reason()) == "ArtifactFailed");
      CHECK(std::string(e.what()).find("Secret/flux-system/absent") != std::string::npos);
    }
  }
  SUBCASE("a version the distribution does not have: BuildFailed") {
    RenderRequest newer = request();
    newer.version = "3.x";
    try {
      reconcile_instance(cluster, artifacts, flux_instance(), newer, quick(), {});
      FAIL("no error");
    } catch (const ReconcileError& e) {
      CHECK(e.failure() == Failure::build);
      CHECK(std::string(e.what()).find("--version") != std::string::npos);
    }
  }
  SUBCASE("apply's preflight: a cheap check that fails refuses it") {
    ApplyOptions checked = quick();
    checked.preflight = true;
    CHECK_THROWS_WITH_AS(
        reconcile_instance(cluster, artifacts, flux_instance(), request(), checked, {}),
        "instance.yaml: kubernetes-version: Kubernetes v1.31.0 is outside the range Flux v2.9.0 "
        "supports: >=1.33.0-0 (share/manifests/kubernetes-versions.yaml)",
        Error);
  }
  CHECK(cluster.objects.count("FluxInstance/flux-system/flux") == 0);
  CHECK(cluster.objects.count("Namespace//flux-system") == 0);
}

std::string image_of(const FakeCluster& cluster, const std::string& deployment) {
  return cluster.objects.at("Deployment/flux-system/" +
                            deployment)["spec"]["template"]["spec"]["containers"][0]["image"];
}

TEST_CASE("--verify: every image installed is verified before the apply, a tag pinned") {
  FakeCluster cluster;
  serve_flux_kinds(cluster);
  FakeArtifacts artifacts;
  RenderRequest verifying = request();
  Reconciliation unverified =
      reconcile_instance(cluster, artifacts, flux_instance(), verifying, quick(), {});
  std::string tagged = image_of(cluster, "source-controller");
  std::string kustomize_tagged = image_of(cluster, "kustomize-controller");
  REQUIRE(tagged.find('@') == std::string::npos);

  verifying.verify_images = true;
  std::string source_digest = "sha256:" + std::string(64, '1');
  artifacts.signed_images = {
      {"oci://ghcr.io/fluxcd/source-controller", source_digest},
      {"oci://ghcr.io/fluxcd/kustomize-controller", "sha256:" + std::string(64, '2')}};
  SUBCASE("signed: each image verified once, by the upstream signer; the digest installed") {
    Reconciliation run =
        reconcile_instance(cluster, artifacts, flux_instance(), verifying, quick(),
                           [&](const RenderedInstance&) { CHECK(artifacts.verified.size() == 2); });
    // Once each (on several threads: in no given order).
    std::set<std::string> verified(artifacts.verified.begin(), artifacts.verified.end());
    CHECK(verified.size() == artifacts.verified.size());
    CHECK(verified ==
          std::set<std::string>{
              "oci://" + tagged + " " + std::string(signatures::kFluxIdentity),
              "oci://" + kustomize_tagged + " " + std::string(signatures::kFluxIdentity)});
    CHECK(image_of(cluster, "source-controller") == tagged + "@" + source_digest);
    CHECK(run.result.revision != unverified.result.revision);
    CHECK(run.result.revision.starts_with(unverified.instance.rendered.version.original +
                                          "@sha256:"));
  }
  SUBCASE("the images' signatures are asked for together, not one after the other") {
    // Each answer waits until both are asked: one after the other, the first
    // would wait out the bound.
    artifacts.wait_together = 2;
    reconcile_instance(cluster, artifacts, flux_instance(), verifying, quick(), {});
    CHECK(artifacts.asked_together);
    CHECK(image_of(cluster, "source-controller") == tagged + "@" + source_digest);
  }
  SUBCASE("one image unsigned: ArtifactFailed naming it, and nothing applied") {
    artifacts.signed_images->erase("oci://ghcr.io/fluxcd/kustomize-controller");
    try {
      reconcile_instance(cluster, artifacts, flux_instance(), verifying, quick(),
                         [](const RenderedInstance&) { FAIL("rendered"); });
      FAIL("no error");
    } catch (const ReconcileError& e) {
      CHECK(e.failure() == Failure::artifact);
      CHECK(std::string(e.what()) ==
            "--verify: Deployment flux-system/kustomize-controller: image " + kustomize_tagged +
                ": oci://" + kustomize_tagged + ": no signature (expected identity " +
                std::string(signatures::kFluxIdentity) + ")");
    }
    CHECK(image_of(cluster, "source-controller") == tagged);
  }
}

TEST_CASE(
    "the plan reads the pull secret, then diffs on a dry run, and a render failure connects "
    "nothing") {
  FakeCluster cluster(/*dry_run=*/true);
  serve_flux_kinds(cluster);
  put_pull_secret(cluster);
  FakeArtifacts artifacts;
  artifacts.digests["oci://registry.example/flux-manifests:latest"] = "sha256:abc";
  int connected = 0;
  auto connect = [&]() -> kube::Cluster& {
    ++connected;
    return cluster;
  };
  RenderRequest from_instance = request();
  from_instance.artifact.clear();
  Plan plan =
      plan_instance(connect, artifacts,
                    flux_instance("    artifact: oci://registry.example/flux-manifests:latest\n"
                                  "    artifactPullSecret: pull\n"),
                    from_instance, {});
  CHECK(artifacts.pulls ==
        std::vector<std::string>{"oci://registry.example/flux-manifests:latest robot:s3cret"});
  CHECK(plan.diff.changed > 0);
  CHECK(cluster.objects.count("Deployment/flux-system/source-controller") == 0);

  connected = 0;
  RenderRequest newer = request();
  newer.version = "3.x";
  CHECK_THROWS_AS(plan_instance(connect, artifacts, flux_instance(), newer, {}), ReconcileError);
  CHECK(connected == 0);
}

TEST_CASE("a render whose cached layer was found damaged and removed is run again, once") {
  FakeArtifacts artifacts;
  artifacts.digests["oci://registry.example/flux-manifests:latest"] = "sha256:abc";
  RenderRequest from_instance = request();
  from_instance.artifact.clear();
  std::vector<std::string> notices;
  from_instance.notice = [&notices](const std::string& notice) { notices.push_back(notice); };
  instance::FluxInstance flux =
      flux_instance("    artifact: oci://registry.example/flux-manifests:latest\n");
  // Removed: pulled again, rendered, and said.
  artifacts.damaged_pulls = 1;
  RenderedInstance rendered = render_instance(artifacts, flux, from_instance, {});
  CHECK(artifacts.pulls.size() == 2);
  CHECK(rendered.artifact_digest == "sha256:abc");
  REQUIRE_FALSE(notices.empty());
  CAPTURE(notices.front());
  CHECK(notices.front().starts_with("warning: "));
  CHECK(notices.front().find("fake") != std::string::npos);
  // Once: a second failure is the render's error.
  artifacts.pulls.clear();
  artifacts.damaged_pulls = 2;
  CHECK_THROWS_AS(render_instance(artifacts, flux, from_instance, {}), ReconcileError);
  CHECK(artifacts.pulls.size() == 2);
  // A failure that removed nothing is not retried.
  artifacts.pulls.clear();
  artifacts.damaged_pulls = 1;
  artifacts.damaged_removed = false;
  CHECK_THROWS_AS(render_instance(artifacts, flux, from_instance, {}), ReconcileError);
  CHECK(artifacts.pulls.size() == 1);
}

// The disk, its reads counted.
class CountedDisk final : public FileSystem {
 public:
  mutable std::atomic<int> reads{0};
  Kind kind(const std::string& path) const override { return disk().kind(path); }
  std::vector<std::string> list(const std::string& dir, Kind kind) const override {
    return disk().list(dir, kind);
  }
  std::string read(const std::string& path) const override {
    ++reads;
    return disk().read(path);
  }
  std::string resolve(const std::string& path) const override { return disk().resolve(path); }
};

TEST_CASE("a tag's last artifact is rendered while the pull resolves it, kept if still named") {
  const std::string url = "oci://registry.example/flux-manifests:latest";
  FakeArtifacts artifacts;
  artifacts.digests[url] = "sha256:abc";
  auto likely_files = std::make_shared<CountedDisk>();
  auto answer_files = std::make_shared<CountedDisk>();
  artifacts.likely =
      PulledDistribution{distribution::directory_distribution(kDistribution, likely_files), ""};
  artifacts.answer_files = answer_files;
  RenderRequest from_instance = request();
  from_instance.artifact.clear();
  from_instance.version = "2.9.x";
  instance::FluxInstance flux = flux_instance("    artifact: " + url + "\n");
  auto render = [&] { return render_instance(artifacts, flux, from_instance, {}); };

  // Still the tag's artifact: the early render is the render.
  artifacts.likely->digest = "sha256:abc";
  RenderedInstance early = render();
  CHECK(likely_files->reads > 0);
  CHECK(answer_files->reads == 0);
  CHECK(early.artifact_digest == "sha256:abc");
  CHECK(early.flux.distribution.version == "2.9.x");
  CHECK(early.rendered.version.original == "v2.9.0");

  // The tag moved: the early render is dropped, the answer rendered.
  artifacts.likely->digest = "sha256:old";
  RenderedInstance moved = render();
  CHECK(answer_files->reads > 0);
  CHECK(moved.artifact_digest == "sha256:abc");
  CHECK(moved.rendered.objects == early.rendered.objects);

  // An early render that fails is no error: the answer is rendered.
  artifacts.likely = PulledDistribution{
      distribution::Distribution(FLUXOPCTL_TEST_DATA "/distribution/fake"), "sha256:abc"};
  answer_files->reads = 0;
  RenderedInstance recovered = render();
  CHECK(answer_files->reads > 0);
  CHECK(recovered.rendered.objects == early.rendered.objects);
}

TEST_CASE("the artifact's digest follows the render's precedence") {
  FakeArtifacts artifacts;
  artifacts.digests["oci://registry.example/flux-manifests:latest"] = "sha256:abc";
  artifacts.digests["oci://registry.example/from-env:1"] = "sha256:env";
  RenderRequest from_environment = request();
  from_environment.artifact.clear();
  CHECK(artifact_digest(artifacts, flux_instance(), request(), {}) == "");
  from_environment.environment.distribution = "oci://registry.example/from-env:1";
  CHECK(artifact_digest(artifacts, flux_instance(), from_environment, {}) == "sha256:env");
  CHECK(
      artifact_digest(artifacts,
                      flux_instance("    artifact: oci://registry.example/flux-manifests:latest\n"),
                      from_environment, {}) == "sha256:abc");
  from_environment.environment.distribution.clear();
  CHECK(artifact_digest(artifacts, flux_instance(), from_environment, {}) == "");
  artifacts.default_digest = "sha256:default";
  CHECK(artifact_digest(artifacts, flux_instance(), from_environment, {}) == "sha256:default");
}

}  // namespace
}  // namespace fluxop::reconcile
