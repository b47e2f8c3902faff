// The checks before an apply, each on a cluster in memory: what it reads,
// what it decides, and that apply refuses before its first write when a
// cheap one fails.
#include "core/reconcile/preflight.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "../instance/support.h"
#include "../kube/fake_cluster.h"
#include "../memory_dir.h"
#include "core/render/render.h"
#include "core/yaml/parse.h"

namespace fluxop::reconcile {
namespace {

using nlohmann::json;
using testing::FakeCluster;

const std::string kDistribution = FLUXOPCTL_TEST_DATA "/golden/distribution";

constexpr std::string_view kComponents = R"(  wait: false
  components: [source-controller, kustomize-controller]
)";

RenderedInstance rendered(std::string_view extra = "") {
  instance::FluxInstance flux =
      instance::testing::load_minimal_with(std::string(kComponents) + std::string(extra));
  distribution::Distribution distribution(kDistribution);
  render::Rendered objects =
      render::render(flux, distribution, {false, render::Mode::operator_controller, nullptr});
  return {std::move(flux), std::move(distribution), std::move(objects), ""};
}

void serve_storage_classes(FakeCluster& cluster) {
  cluster.served.insert("storage.k8s.io/v1/StorageClass");
}

json object(std::string api_version, std::string kind, std::string ns, std::string name) {
  json metadata = {{"name", std::move(name)}};
  if (!ns.empty()) metadata["namespace"] = std::move(ns);
  return {
      {"apiVersion", std::move(api_version)}, {"kind", std::move(kind)}, {"metadata", metadata}};
}

bool wrote(const FakeCluster& cluster) {
  return std::any_of(cluster.requests_log.begin(), cluster.requests_log.end(),
                     [](const std::string& request) {
                       return !request.starts_with("GET") && !request.starts_with("LIST") &&
                              !request.starts_with("REVIEW");
                     });
}

TEST_CASE("check kubernetes-version: the server's version against the Flux minor's range") {
  FakeCluster cluster;
  RenderedInstance instance = rendered();
  REQUIRE(instance.rendered.version.original == "v2.9.0");
  auto on = [&](std::string server) {
    cluster.kubernetes_version = std::move(server);
    return check_kubernetes_version(cluster, instance);
  };
  auto is = [](CheckStatus status, std::string message) {
    return CheckResult{"kubernetes-version", status, std::move(message)};
  };
  const std::string ours = " (share/manifests/kubernetes-versions.yaml)";
  CHECK(on("v1.34.10") == is(CheckStatus::ok,
                             "Kubernetes v1.34.10 is within the range Flux "
                             "v2.9.0 supports: >=1.33.0-0" +
                                 ours));
  CHECK(on("v1.33.1-eks-4").status == CheckStatus::ok);
  CHECK(on("v1.32.9") == is(CheckStatus::failed,
                            "Kubernetes v1.32.9 is outside the range Flux "
                            "v2.9.0 supports: >=1.33.0-0" +
                                ours));
  CHECK(on("devel") ==
        is(CheckStatus::warning, "the API server's version \"devel\" is not a semantic version"));

  // A Flux minor fluxopctl knows nothing of, unless its distribution does.
  instance.rendered.version = *distribution::parse_version("v2.99.0");
  CHECK(on("v1.34.10") == is(CheckStatus::warning,
                             "Kubernetes v1.34.10: no supported range is known for Flux v2.99.0 "
                             "(add kubernetes-versions.yaml to the distribution)"));
  testing::MemoryDir dir;
  dir.write("flux/v2.99.0/source-controller.yaml", "");
  dir.write("kubernetes-versions.yaml", "\"2.99\": \">=1.35.0-0\"\n");
  instance.distribution = distribution::directory_distribution(dir.str(), dir.files());
  CHECK(on("v1.34.10") == is(CheckStatus::failed,
                             "Kubernetes v1.34.10 is outside the range Flux v2.99.0 supports: "
                             ">=1.35.0-0 (/mem/kubernetes-versions.yaml)"));
}

TEST_CASE("check namespace: absent or active is ok, Terminating fails") {
  FakeCluster cluster;
  instance::FluxInstance flux = rendered().flux;
  CHECK(check_namespace(cluster, flux).message ==
        "Namespace/flux-system does not exist yet; apply creates it");
  cluster.put(object("v1", "Namespace", "", "flux-system"));
  CHECK(check_namespace(cluster, flux).status == CheckStatus::ok);
  cluster.objects["Namespace/flux-system"]["status"] = {{"phase", "Terminating"}};
  CheckResult terminating = check_namespace(cluster, flux);
  CHECK(terminating.status == CheckStatus::failed);
  CHECK(terminating.message ==
        "Namespace/flux-system is being deleted (Terminating): nothing can be created in it "
        "until it is gone");
  cluster.objects["Namespace/flux-system"].erase("status");
  cluster.objects["Namespace/flux-system"]["metadata"]["deletionTimestamp"] =
      "2026-01-01T00:00:00Z";
  CHECK(check_namespace(cluster, flux).status == CheckStatus::failed);
}

TEST_CASE("check storage-class: the class the instance names must exist") {
  FakeCluster cluster;
  serve_storage_classes(cluster);
  CHECK(check_storage_class(cluster, rendered().flux).message ==
        "the instance names no StorageClass");
  instance::FluxInstance flux = rendered("  storage: {class: fast, size: 1Gi}\n").flux;
  CheckResult missing = check_storage_class(cluster, flux);
  CHECK(missing.status == CheckStatus::failed);
  CHECK(missing.message ==
        "StorageClass \"fast\" (.spec.storage.class) does not exist: source-controller's "
        "PersistentVolumeClaim would never be bound");
  cluster.put(object("storage.k8s.io/v1", "StorageClass", "", "fast"));
  CHECK(check_storage_class(cluster, flux).status == CheckStatus::ok);
}

TEST_CASE("check flux-instances: this instance is updated, another one refused") {
  FakeCluster cluster;
  cluster.served.insert("fluxcd.controlplane.io/v1/FluxInstance");
  instance::FluxInstance flux = rendered().flux;
  CHECK(check_instances(cluster, flux).message == "no FluxInstance in the cluster");
  cluster.put(object("fluxcd.controlplane.io/v1", "FluxInstance", "flux-system", "flux"));
  CHECK(check_instances(cluster, flux).message ==
        "FluxInstance flux-system/flux exists; apply updates it");
  cluster.put(object("fluxcd.controlplane.io/v1", "FluxInstance", "other", "flux"));
  CheckResult second = check_instances(cluster, flux);
  CHECK(second.status == CheckStatus::failed);
  CHECK(second.message ==
        "FluxInstance other/flux already manages Flux on this cluster; there can be only one "
        "(delete it first, or apply it instead)");
}

TEST_CASE("check installation: objects of other tools are named, a warning") {
  FakeCluster cluster;
  RenderedInstance instance = rendered();
  CHECK(check_installation(cluster, instance).message.starts_with("none of its "));

  json deployment = object("apps/v1", "Deployment", "flux-system", "source-controller");
  deployment["metadata"]["annotations"] = {
      {"kubectl.kubernetes.io/last-applied-configuration", "{}"}};
  cluster.put(deployment);
  json helm = object("apps/v1", "Deployment", "flux-system", "kustomize-controller");
  helm["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "Helm"}};
  cluster.put(helm);
  json bootstrap = object("v1", "ServiceAccount", "flux-system", "source-controller");
  bootstrap["metadata"]["labels"] = {{"kustomize.toolkit.fluxcd.io/name", "flux-system"}};
  cluster.put(bootstrap);
  json ours = object("v1", "Namespace", "", "flux-system");
  ours["metadata"]["managedFields"] = {{{"manager", "flux-operator"}, {"operation", "Apply"}}};
  cluster.put(ours);

  CheckResult found = check_installation(cluster, instance);
  CHECK(found.status == CheckStatus::warning);
  CHECK(found.message ==
        "apply takes over objects installed by another tool: Helm: 1 "
        "(Deployment/flux-system/kustomize-controller); flux bootstrap: 1 "
        "(ServiceAccount/flux-system/source-controller); kubectl: 1 "
        "(Deployment/flux-system/source-controller)");

  // The operator's objects are this apply's own under its field manager,
  // another's under any other.
  cluster.objects.clear();
  cluster.put(ours);
  CHECK(check_installation(cluster, instance).message ==
        "1 of its objects exist, none that apply would take over from another tool");
  FakeCluster other_manager;
  other_manager.set_field_manager("fluxopctl");
  other_manager.put(ours);
  CHECK(check_installation(other_manager, instance).message ==
        "apply takes over objects installed by another tool: the Flux Operator: 1 "
        "(Namespace/flux-system)");
}

TEST_CASE(
    "check permissions: every kind the apply writes, get/create/patch/delete where it "
    "writes it") {
  FakeCluster cluster;
  RenderedInstance instance = rendered();
  CheckResult all = check_permissions(cluster, instance);
  CHECK(all.status == CheckStatus::ok);
  auto asked = [&](const std::string& access) {
    return std::count(cluster.requests_log.begin(), cluster.requests_log.end(), "REVIEW " + access);
  };
  CHECK(asked("create Namespace ") == 1);
  CHECK(asked("delete Namespace ") == 0);  // never pruned (fluxcd.controlplane.io/prune: disabled)
  CHECK(asked("delete Deployment flux-system") == 1);
  CHECK(asked("patch CustomResourceDefinition ") == 1);
  CHECK(asked("create GitRepository ") == 0);  // a CRD's kind is applied by no one here
  CHECK(asked("patch FluxInstance/status flux-system") == 1);
  CHECK(asked("list FluxInstance ") == 1);
  CHECK(asked("update Lease flux-system") == 1);
  CHECK(asked("delete ClusterRole ") == 1);

  cluster.denied = {"create Namespace ", "patch ClusterRoleBinding "};
  CheckResult denied = check_permissions(cluster, instance);
  CHECK(denied.status == CheckStatus::failed);
  CHECK(denied.message.starts_with(
      "the caller may not create Namespace, patch ClusterRoleBinding (2 of the "));
}

TEST_CASE("check permissions: a kind whose CRD is still to be applied carries its plural") {
  FakeCluster cluster;
  RenderedInstance instance = rendered(
      "  sync:\n    kind: GitRepository\n    url: https://example.com/repo.git\n"
      "    ref: refs/heads/main\n    path: clusters/one\n");
  // The small distribution has no CRDs: the GitRepository's, as Flux's.
  instance.rendered.objects.push_back(yaml::parse_document(R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gitrepositories.source.toolkit.fluxcd.io}
spec:
  group: source.toolkit.fluxcd.io
  names: {kind: GitRepository, plural: gitrepositories}
)",
                                                           "crd.yaml"));
  check_permissions(cluster, instance);
  auto resource_of = [&](std::string_view kind) {
    for (const kube::AccessQuery& query : cluster.reviewed) {
      if (query.kind.kind == kind) return query.resource;
    }
    return std::string("(not asked)");
  };
  CHECK(resource_of("GitRepository") == "gitrepositories");
  CHECK(resource_of("Kustomization").empty());  // no CRD defines it here
  CHECK(resource_of("FluxInstance") == "fluxinstances");
  // The server maps the kinds it serves.
  CHECK(resource_of("Deployment").empty());
}

TEST_CASE("apply's cheap checks refuse a failed one before any write") {
  FakeCluster cluster;
  serve_storage_classes(cluster);
  cluster.kubernetes_version = "v1.34.10";
  RenderedInstance instance = rendered("  storage: {class: fast, size: 1Gi}\n");
  std::vector<std::string> notices;
  auto notice = [&](const std::string& line) { notices.push_back(line); };
  CHECK_THROWS_WITH_AS(require_cheap_checks(cluster, instance, notice),
                       "instance.yaml: storage-class: StorageClass \"fast\" (.spec.storage.class) "
                       "does not exist: source-controller's PersistentVolumeClaim would never be "
                       "bound",
                       Error);
  CHECK_FALSE(wrote(cluster));
  cluster.put(object("storage.k8s.io/v1", "StorageClass", "", "fast"));
  CHECK_NOTHROW(require_cheap_checks(cluster, instance, notice));
  CHECK(notices.empty());
  cluster.kubernetes_version = "v1.30.0";
  CHECK_THROWS_WITH_AS(
      require_cheap_checks(cluster, instance, notice),
      "instance.yaml: kubernetes-version: Kubernetes v1.30.0 is outside the range "
      "Flux v2.9.0 supports: >=1.33.0-0 (share/manifests/kubernetes-versions.yaml)",
      Error);
}

// A caller who may not read StorageClasses (deploy/rbac.yaml's).
class NoStorageClassReads : public FakeCluster {
 public:
  std::optional<json> get(const kube::ObjectKey& key) override {
    if (key.kind == "StorageClass")
      throw kube::ApiError("StorageClass/fast: forbidden: may not get", 403, "Forbidden");
    return FakeCluster::get(key);
  }
};

TEST_CASE("apply's cheap checks: one that could not tell, or a warning, is said and let through") {
  NoStorageClassReads cluster;
  cluster.kubernetes_version = "devel";
  RenderedInstance instance = rendered("  storage: {class: fast, size: 1Gi}\n");
  std::vector<std::string> notices;
  CHECK_NOTHROW(require_cheap_checks(cluster, instance,
                                     [&](const std::string& line) { notices.push_back(line); }));
  CHECK(notices == std::vector<std::string>{
                       "check kubernetes-version: the API server's version \"devel\" is not "
                       "a semantic version",
                       "check storage-class could not tell: StorageClass/fast: forbidden: may not "
                       "get"});
  // check itself reports it failed: it cannot vouch for it.
  std::vector<CheckResult> checks = cheap_checks(cluster, instance);
  auto storage = std::find_if(checks.begin(), checks.end(), [](const CheckResult& check) {
    return check.name == "storage-class";
  });
  REQUIRE(storage != checks.end());
  CHECK(storage->status == CheckStatus::failed);
}

TEST_CASE(
    "check version: a downgrade fails in apply's words, a first install or an upgrade is ok") {
  RenderedInstance instance = rendered();
  CHECK(version_change_check(std::nullopt, instance) ==
        CheckResult{"version", CheckStatus::ok, "Flux v2.9.0 is a first install"});
  json live = {{"status", {{"lastAppliedRevision", "v2.10.1@sha256:0123"}}}};
  CHECK(version_change_check(live, instance) ==
        CheckResult{"version", CheckStatus::failed,
                    "downgrading from v2.10.1 to v2.9.0 is not supported, reinstall needed"});
  live["status"]["lastAppliedRevision"] = "v2.8.3@sha256:0123";
  CHECK(version_change_check(live, instance).status == CheckStatus::ok);
}

TEST_CASE("check prune and terminating: a CRD kept with its resources, one being deleted") {
  FakeCluster cluster;
  cluster.served.insert("helm.toolkit.fluxcd.io/v2/HelmRelease");
  RenderedInstance instance = rendered();
  json owner = {{"fluxcd.controlplane.io/name", "flux"},
                {"fluxcd.controlplane.io/namespace", "flux-system"}};
  json crd = object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "",
                    "helmreleases.helm.toolkit.fluxcd.io");
  crd["metadata"]["labels"] = owner;
  crd["spec"] = {{"group", "helm.toolkit.fluxcd.io"},
                 {"names", {{"kind", "HelmRelease"}}},
                 {"versions", {{{"name", "v2"}, {"served", true}, {"storage", true}}}}};
  cluster.put(crd);
  cluster.put(object("helm.toolkit.fluxcd.io/v2", "HelmRelease", "apps", "podinfo"));
  json live = {{"status",
                {{"inventory",
                  {{"entries",
                    {{{"id",
                       "_helmreleases.helm.toolkit.fluxcd.io_apiextensions.k8s.io_"
                       "CustomResourceDefinition"},
                      {"v", "v1"}}}}}}}}};
  CheckResult prune = check_prunes(cluster, instance, live, {});
  CHECK(prune.status == CheckStatus::warning);
  CHECK(prune.message ==
        "keep CustomResourceDefinition/helmreleases.helm.toolkit.fluxcd.io: 1 HelmRelease (apps: "
        "1) remains (--prune-crds deletes them with it)");
  CHECK(check_prunes(cluster, instance, live, {.prune_crds = true}).message ==
        "prune CustomResourceDefinition/helmreleases.helm.toolkit.fluxcd.io with its custom "
        "resources (--prune-crds): 1 HelmRelease (apps: 1)");
  CHECK(check_prunes(cluster, instance, std::nullopt, {}).status == CheckStatus::ok);

  CHECK(check_terminating(cluster, instance).status == CheckStatus::ok);
  json& held = cluster.objects.at("CustomResourceDefinition/helmreleases.helm.toolkit.fluxcd.io");
  held["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  held["metadata"]["finalizers"] = {"customresourcecleanup.apiextensions.k8s.io"};
  CHECK(check_terminating(cluster, instance) ==
        CheckResult{"terminating", CheckStatus::failed,
                    "being deleted, so not healthy: apply waits until they are gone, then applies "
                    "them again: "
                    "CustomResourceDefinition/helmreleases.helm.toolkit.fluxcd.io (finalizers: "
                    "customresourcecleanup.apiextensions.k8s.io)"});
  CHECK_FALSE(wrote(cluster));
}

}  // namespace
}  // namespace fluxop::reconcile
