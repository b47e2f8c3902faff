// The uninstall on a cluster in memory: what goes, in which order, what stays,
// and what a stuck object makes of it.
#include "core/reconcile/uninstall.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "../kube/fake_cluster.h"
#include "core/error.h"
#include "core/reconcile/inventory.h"

namespace fluxop::reconcile {
namespace {

using nlohmann::json;
using testing::FakeCluster;

const kube::ObjectKey kInstance{"fluxcd.controlplane.io", "v1", "FluxInstance", "flux-system",
                                "flux"};
const json kOwner = {{"fluxcd.controlplane.io/name", "flux"},
                     {"fluxcd.controlplane.io/namespace", "flux-system"}};

json object(std::string api_version, std::string kind, std::string ns, std::string name,
            bool owned = true) {
  json metadata = {{"name", name}};
  if (!ns.empty()) metadata["namespace"] = ns;
  if (owned) metadata["labels"] = kOwner;
  return {{"apiVersion", api_version}, {"kind", kind}, {"metadata", metadata}};
}

// Flux installed by the instance: a namespace kept by its annotation, a
// controller, a CRD and a custom resource of the sync in the inventory; a
// Kustomization of the user's with a finalizer, and a workload it deployed.
struct Installed {
  FakeCluster cluster;
  std::vector<std::string> progress;
  UninstallOptions options;

  Installed() {
    cluster.served.insert("fluxcd.controlplane.io/v1/FluxInstance");
    cluster.served.insert("kustomize.toolkit.fluxcd.io/v1/Kustomization");
    json ns = object("v1", "Namespace", "", "flux-system");
    ns["metadata"]["annotations"] = {{"fluxcd.controlplane.io/prune", "disabled"}};
    std::vector<json> inventory = {
        ns,
        object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "",
               "kustomizations.kustomize.toolkit.fluxcd.io"),
        object("v1", "ServiceAccount", "flux-system", "kustomize-controller"),
        object("apps/v1", "Deployment", "flux-system", "kustomize-controller"),
        object("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "flux-system")};
    std::vector<kube::ObjectKey> refs;
    for (const json& one : inventory) {
      cluster.put(one);
      refs.push_back(kube::object_key(one));
    }
    json instance = object("fluxcd.controlplane.io/v1", "FluxInstance", "flux-system", "flux",
                           /*owned=*/false);
    instance["status"] = {{"inventory", inventory_json(refs)}};
    cluster.put(instance);
    json apps = object("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "apps", "apps", false);
    apps["metadata"]["finalizers"] = {"finalizers.fluxcd.io"};
    apps["spec"] = {{"interval", "5m"}, {"prune", true}};
    cluster.put(apps);
    json workload = object("apps/v1", "Deployment", "apps", "podinfo", false);
    workload["metadata"]["labels"] = {{"kustomize.toolkit.fluxcd.io/name", "apps"}};
    cluster.put(workload);
    options.timeout = std::chrono::seconds(1);
    options.on_progress = [this](const std::string& line) { progress.push_back(line); };
  }

  bool has(const std::string& key) const { return cluster.objects.contains(key); }
  std::size_t position(const std::string& request) const {
    auto at = std::find(cluster.requests_log.begin(), cluster.requests_log.end(), request);
    REQUIRE_MESSAGE(at != cluster.requests_log.end(), request);
    return static_cast<std::size_t>(at - cluster.requests_log.begin());
  }
};

TEST_CASE("uninstall: the controllers, then the finalizers, then the inventory and the instance") {
  Installed installed;
  UninstallResult result = uninstall_instance(installed.cluster, kInstance, installed.options);
  CHECK(result.found);
  CHECK(result.message.starts_with("Uninstallation completed in "));
  CHECK_FALSE(installed.has("Deployment/flux-system/kustomize-controller"));
  CHECK_FALSE(installed.has("CustomResourceDefinition/kustomizations.kustomize.toolkit.fluxcd.io"));
  CHECK_FALSE(installed.has("ServiceAccount/flux-system/kustomize-controller"));
  CHECK_FALSE(installed.has("Kustomization/flux-system/flux-system"));
  CHECK_FALSE(installed.has("FluxInstance/flux-system/flux"));
  CHECK_FALSE(installed.has("Lease/flux-system/fluxopctl-flux"));
  // What the instance did not install stays; the annotated namespace too.
  CHECK(installed.has("Namespace/flux-system"));
  CHECK(installed.has("Deployment/apps/podinfo"));
  // Released in one write: suspended, so that a controller still running
  // never prunes what it applied, whatever it does with its finalizer.
  const json& released = installed.cluster.objects.at("Kustomization/apps/apps");
  CHECK(released["metadata"]["finalizers"].empty());
  CHECK(released["spec"]["suspend"] == true);
  CHECK(std::count(installed.cluster.requests_log.begin(), installed.cluster.requests_log.end(),
                   "PATCH Kustomization/apps/apps") == 1);

  std::size_t controller = installed.position("DELETE Deployment/flux-system/kustomize-controller");
  std::size_t finalizers = installed.position("PATCH Kustomization/apps/apps");
  std::size_t crd = installed.position(
      "DELETE CustomResourceDefinition/kustomizations.kustomize.toolkit.fluxcd.io");
  CHECK(controller < finalizers);
  CHECK(finalizers < crd);
  CHECK(crd < installed.position("DELETE FluxInstance/flux-system/flux"));

  std::vector<std::string> lines;
  for (const ssa::Change& change : result.changes) lines.push_back(ssa::change_line(change));
  CHECK(std::find(lines.begin(), lines.end(), "Namespace/flux-system skipped") != lines.end());
  CHECK(std::find(lines.begin(), lines.end(), "FluxInstance/flux-system/flux deleted") !=
        lines.end());
  CHECK(std::find(installed.progress.begin(), installed.progress.end(),
                  "suspended and removed the finalizers of 1 Kustomization") !=
        installed.progress.end());
}

TEST_CASE("uninstall: nothing is released while a controller's pod is there") {
  Installed installed;
  json controller = installed.cluster.objects.at("Deployment/flux-system/kustomize-controller");
  controller["spec"] = {{"selector", {{"matchLabels", {{"app", "kustomize-controller"}}}}}};
  installed.cluster.put(controller);
  // Its Deployment goes at once; its pod, the controller running, stays.
  json pod = object("v1", "Pod", "flux-system", "kustomize-controller-5d8f9", false);
  pod["metadata"]["labels"] = {{"app", "kustomize-controller"}};
  installed.cluster.put(pod);
  CHECK_THROWS_WITH_AS(uninstall_instance(installed.cluster, kInstance, installed.options),
                       doctest::Contains("timeout waiting for the controllers' pods to be gone: "
                                         "Pod/flux-system/kustomize-controller-5d8f9"),
                       Error);
  CHECK_FALSE(installed.has("Deployment/flux-system/kustomize-controller"));
  CHECK(installed.cluster.objects.at("Kustomization/apps/apps")["metadata"]["finalizers"].size() ==
        1);
  CHECK(installed.has("CustomResourceDefinition/kustomizations.kustomize.toolkit.fluxcd.io"));

  installed.cluster.objects.erase("Pod/flux-system/kustomize-controller-5d8f9");
  CHECK(uninstall_instance(installed.cluster, kInstance, installed.options)
            .message.starts_with("Uninstallation completed in "));
}

TEST_CASE("uninstall: the finalizers removed in one batch, one refused stops before the CRDs") {
  Installed installed;
  for (int i = 0; i < 30; ++i) {
    json more = object("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "apps",
                       "more-" + std::to_string(i), false);
    more["metadata"]["finalizers"] = {"finalizers.fluxcd.io"};
    installed.cluster.put(more);
  }
  installed.cluster.refuse_patch.emplace(
      "Kustomization/apps/more-7",
      kube::ApiError("Kustomization/apps/more-7: forbidden: no", 403, "Forbidden"));
  CHECK_THROWS_WITH_AS(uninstall_instance(installed.cluster, kInstance, installed.options),
                       "1 object not patched: Kustomization/apps/more-7: forbidden: no", Error);
  CHECK(installed.cluster.patch_batches == 1);
  // Every other finalizer went; the CRDs and the instance wait for the next run.
  CHECK(
      installed.cluster.objects.at("Kustomization/apps/more-8")["metadata"]["finalizers"].empty());
  CHECK(installed.has("CustomResourceDefinition/kustomizations.kustomize.toolkit.fluxcd.io"));
  CHECK(installed.has("FluxInstance/flux-system/flux"));

  installed.cluster.refuse_patch.clear();
  uninstall_instance(installed.cluster, kInstance, installed.options);
  CHECK(std::find(installed.progress.begin(), installed.progress.end(),
                  "suspended and removed the finalizers of 1 Kustomization") !=
        installed.progress.end());
  CHECK_FALSE(installed.has("FluxInstance/flux-system/flux"));
}

TEST_CASE("uninstall: run again once done, there is nothing to do") {
  Installed installed;
  uninstall_instance(installed.cluster, kInstance, installed.options);
  installed.cluster.requests_log.clear();
  UninstallResult again = uninstall_instance(installed.cluster, kInstance, installed.options);
  CHECK_FALSE(again.found);
  CHECK(again.changes.empty());
  CHECK(installed.cluster.logged("DELETE").empty());
  CHECK(installed.cluster.logged("PATCH").empty());
}

TEST_CASE("uninstall: stopped half-way, run again it finishes") {
  Installed installed;
  // The controllers went, then it stopped.
  installed.cluster.objects.erase("Deployment/flux-system/kustomize-controller");
  UninstallResult result = uninstall_instance(installed.cluster, kInstance, installed.options);
  CHECK(result.found);
  CHECK_FALSE(installed.has("CustomResourceDefinition/kustomizations.kustomize.toolkit.fluxcd.io"));
  CHECK_FALSE(installed.has("FluxInstance/flux-system/flux"));
}

TEST_CASE(
    "uninstall: keep-crds keeps the CRDs and the Flux custom resources with their finalizers") {
  Installed installed;
  installed.options.keep_crds = true;
  uninstall_instance(installed.cluster, kInstance, installed.options);
  CHECK_FALSE(installed.has("Deployment/flux-system/kustomize-controller"));
  CHECK_FALSE(installed.has("ServiceAccount/flux-system/kustomize-controller"));
  CHECK_FALSE(installed.has("FluxInstance/flux-system/flux"));
  CHECK(installed.has("CustomResourceDefinition/kustomizations.kustomize.toolkit.fluxcd.io"));
  CHECK(installed.has("Kustomization/flux-system/flux-system"));
  CHECK(installed.cluster.objects.at("Kustomization/apps/apps")["metadata"]["finalizers"].size() ==
        1);
}

TEST_CASE("uninstall: an object that does not go is named with what holds it") {
  Installed installed;
  std::string crd = "CustomResourceDefinition/kustomizations.kustomize.toolkit.fluxcd.io";
  installed.cluster.stuck.insert(crd);
  installed.cluster.objects.at(crd)["metadata"]["finalizers"] = {
      "customresourcecleanup.apiextensions.k8s.io"};
  std::string error;
  try {
    uninstall_instance(installed.cluster, kInstance, installed.options);
  } catch (const Error& e) {
    error = e.what();
  }
  CHECK(error == "timeout waiting for the deleted objects to be gone: " + crd +
                     " (finalizers: customresourcecleanup.apiextensions.k8s.io)");
  // The instance stays, with its inventory, for the next attempt.
  CHECK(installed.has("FluxInstance/flux-system/flux"));
}

TEST_CASE("uninstall: marked not Ready before anything is deleted, and a failure leaves the mark") {
  Installed installed;
  std::string crd = "CustomResourceDefinition/kustomizations.kustomize.toolkit.fluxcd.io";
  installed.cluster.stuck.insert(crd);
  installed.cluster.objects.at("FluxInstance/flux-system/flux")["metadata"]["generation"] = 3;
  CHECK_THROWS_AS(uninstall_instance(installed.cluster, kInstance, installed.options), Error);
  CHECK(installed.position("STATUS FluxInstance/flux-system/flux") <
        installed.position("DELETE Deployment/flux-system/kustomize-controller"));
  const json& ready =
      installed.cluster.objects.at("FluxInstance/flux-system/flux")["status"]["conditions"][0];
  CHECK(ready["type"] == "Ready");
  CHECK(ready["status"] == "False");
  CHECK(ready["reason"] == "Uninstalling");
  CHECK(ready["observedGeneration"] == 3);
  CHECK(ready["message"].get<std::string>().find("fluxopctl delete") != std::string::npos);

  // Run again, it finishes.
  installed.cluster.stuck.clear();
  uninstall_instance(installed.cluster, kInstance, installed.options);
  CHECK_FALSE(installed.has("FluxInstance/flux-system/flux"));

  // Behind the finalizer, the instance being deleted says it: no status.
  Installed deleting;
  deleting.options.behind_finalizer = true;
  deleting.cluster.objects.at("FluxInstance/flux-system/flux")["metadata"]["finalizers"] = {
      std::string(kInstanceFinalizer)};
  uninstall_instance(deleting.cluster, kInstance, deleting.options);
  CHECK(deleting.cluster.logged("STATUS").empty());
}

TEST_CASE("uninstall: behind the finalizer it goes on past a failure and releases the instance") {
  Installed installed;
  installed.options.behind_finalizer = true;
  std::string crd = "CustomResourceDefinition/kustomizations.kustomize.toolkit.fluxcd.io";
  installed.cluster.stuck.insert(crd);
  installed.cluster.objects.at("FluxInstance/flux-system/flux")["metadata"]["finalizers"] = {
      "example.com/other", std::string(kInstanceFinalizer)};
  UninstallResult result = uninstall_instance(installed.cluster, kInstance, installed.options);
  REQUIRE(result.warnings.size() == 2);
  CHECK(result.warnings[0].starts_with("deleting the inventory: timeout waiting for"));
  // Not said complete: the CRD is still there.
  CHECK(result.warnings[1].starts_with("Uninstallation not complete after "));
  CHECK(result.warnings[1].find(crd + " (terminating)") != std::string::npos);
  CHECK(result.message == result.warnings[1]);
  // Being deleted, it is only released: ours goes, another's stays.
  REQUIRE(installed.has("FluxInstance/flux-system/flux"));
  CHECK(installed.cluster.objects.at("FluxInstance/flux-system/flux")["metadata"]["finalizers"] ==
        json::array({"example.com/other"}));
  std::vector<std::string> deleted = installed.cluster.logged("DELETE");
  CHECK(std::find(deleted.begin(), deleted.end(), "FluxInstance/flux-system/flux") ==
        deleted.end());
  CHECK(std::find(deleted.begin(), deleted.end(), "Lease/flux-system/fluxopctl-flux") !=
        deleted.end());
}

TEST_CASE("uninstall: behind the finalizer, nothing without it, only a release when disabled") {
  Installed installed;
  installed.options.behind_finalizer = true;
  json& instance = installed.cluster.objects.at("FluxInstance/flux-system/flux");
  UninstallResult result = uninstall_instance(installed.cluster, kInstance, installed.options);
  CHECK(result.changes.empty());
  CHECK(installed.cluster.logged("DELETE").empty());

  instance["metadata"]["finalizers"] = {std::string(kInstanceFinalizer)};
  instance["metadata"]["annotations"] = {{"fluxcd.controlplane.io/reconcile", "disabled"}};
  result = uninstall_instance(installed.cluster, kInstance, installed.options);
  CHECK(result.changes.empty());
  CHECK(installed.cluster.logged("DELETE").empty());
  CHECK(installed.cluster.objects.at("FluxInstance/flux-system/flux")["metadata"]["finalizers"]
            .empty());
  CHECK(installed.has("Deployment/flux-system/kustomize-controller"));
}

TEST_CASE(
    "uninstall: in a namespace being deleted, done without a new object, the instance released") {
  Installed installed;
  installed.options.behind_finalizer = true;
  installed.cluster.objects.at("Namespace/flux-system")["metadata"]["deletionTimestamp"] =
      "2026-01-01T00:00:00Z";
  json& instance = installed.cluster.objects.at("FluxInstance/flux-system/flux");
  instance["metadata"]["finalizers"] = {std::string(kInstanceFinalizer)};
  instance["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  UninstallResult result = uninstall_instance(installed.cluster, kInstance, installed.options);
  CHECK(result.warnings.empty());
  CHECK(installed.cluster.logged("CREATE").empty());  // no Lease
  CHECK(result.message.find("Namespace/flux-system is being deleted: uninstalled without taking "
                            "the Lease") != std::string::npos);
  CHECK_FALSE(installed.has("Deployment/flux-system/kustomize-controller"));
  CHECK(installed.cluster.objects.at("FluxInstance/flux-system/flux")["metadata"]["finalizers"]
            .empty());
}

TEST_CASE("uninstall: a dry run changes nothing and says what would go") {
  Installed installed;
  FakeCluster& cluster = installed.cluster;
  FakeCluster dry(/*dry_run=*/true);
  dry.served = cluster.served;
  dry.objects = cluster.objects;
  UninstallResult result = uninstall_instance(dry, kInstance, installed.options);
  CHECK(dry.objects == cluster.objects);
  CHECK(dry.logged("CREATE").empty());  // no lock taken
  CHECK(std::count_if(result.changes.begin(), result.changes.end(),
                      [](const ssa::Change& c) { return c.action == ssa::Action::Deleted; }) == 5);
}

TEST_CASE("uninstall: the finalizer is added once") {
  FakeCluster cluster;
  cluster.served.insert("fluxcd.controlplane.io/v1/FluxInstance");
  cluster.put(object("fluxcd.controlplane.io/v1", "FluxInstance", "flux-system", "flux", false));
  ensure_finalizer(cluster, cluster.objects.at("FluxInstance/flux-system/flux"));
  ensure_finalizer(cluster, cluster.objects.at("FluxInstance/flux-system/flux"));
  CHECK(cluster.objects.at("FluxInstance/flux-system/flux")["metadata"]["finalizers"] ==
        json::array({std::string(kInstanceFinalizer)}));
  CHECK(cluster.logged("PATCH").size() == 1);
  CHECK(kube::is_flux_group("source.toolkit.fluxcd.io"));
  CHECK(kube::is_flux_group("source.extensions.fluxcd.io"));
  CHECK_FALSE(kube::is_flux_group("fluxcd.controlplane.io"));
  CHECK_FALSE(kube::is_flux_group("toolkit.fluxcd.io.example.com"));
}

TEST_CASE("uninstall: a lost inventory: what is labelled the instance's goes all the same") {
  Installed installed;
  installed.cluster.objects.at("FluxInstance/flux-system/flux")["status"].erase("inventory");
  UninstallResult result = uninstall_instance(installed.cluster, kInstance, installed.options);
  CHECK(result.message.starts_with("Uninstallation completed in "));
  CHECK_FALSE(installed.has("Deployment/flux-system/kustomize-controller"));
  CHECK_FALSE(installed.has("CustomResourceDefinition/kustomizations.kustomize.toolkit.fluxcd.io"));
  CHECK_FALSE(installed.has("ServiceAccount/flux-system/kustomize-controller"));
  CHECK_FALSE(installed.has("Kustomization/flux-system/flux-system"));
  CHECK(installed.has("Namespace/flux-system"));
  CHECK(installed.has("Deployment/apps/podinfo"));
}

TEST_CASE("uninstall: asked first with what it removes, and not confirmed, nothing is deleted") {
  Installed installed;
  std::string asked;
  installed.options.confirm = [&](const std::string& removes) {
    asked = removes;
    return false;
  };
  CHECK_THROWS_WITH_AS(uninstall_instance(installed.cluster, kInstance, installed.options),
                       "the uninstall of FluxInstance/flux-system/flux was not confirmed: nothing "
                       "deleted",
                       Error);
  CHECK(asked ==
        "FluxInstance/flux-system/flux and 4 objects of its inventory: 1 CustomResourceDefinition "
        "(cluster-wide: 1), 1 Deployment (flux-system: 1), 1 Kustomization (flux-system: 1), 1 "
        "ServiceAccount (flux-system: 1); with the CRDs, every Flux custom resource in the "
        "cluster: 2 Kustomization (apps: 1, flux-system: 1)");
  CHECK(installed.cluster.logged("DELETE").empty());
  CHECK(installed.cluster.logged("PATCH").empty());
  CHECK(installed.cluster.logged("STATUS").empty());

  installed.options.keep_crds = true;
  CHECK_THROWS_AS(uninstall_instance(installed.cluster, kInstance, installed.options), Error);
  CHECK(asked.ends_with("; the CRDs and the Flux custom resources stay (--keep-crds)"));
}

TEST_CASE("uninstall: not complete while objects labelled the instance's remain") {
  Installed installed;
  installed.options.wait = false;
  installed.cluster.stuck.insert("ServiceAccount/flux-system/kustomize-controller");
  UninstallResult result = uninstall_instance(installed.cluster, kInstance, installed.options);
  CHECK(result.message.find("Uninstallation not complete after ") == 0);
  CHECK(result.message.find("1 object labelled its still there: "
                            "ServiceAccount/flux-system/kustomize-controller (not being deleted") ==
        std::string::npos);
  CHECK(result.message.find("ServiceAccount/flux-system/kustomize-controller (terminating)") !=
        std::string::npos);

  Installed waiting;
  waiting.cluster.stuck.insert("ServiceAccount/flux-system/kustomize-controller");
  CHECK_THROWS_AS(uninstall_instance(waiting.cluster, kInstance, waiting.options), Error);
  CHECK(waiting.has("FluxInstance/flux-system/flux"));
}

}  // namespace
}  // namespace fluxop::reconcile
