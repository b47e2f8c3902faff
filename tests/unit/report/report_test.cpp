#include "core/report/report.h"

#include <doctest/doctest.h>

#include "../kube/fake_cluster.h"
#include "core/base64.h"
#include "core/report/write.h"

namespace fluxop::report {
namespace {

using nlohmann::json;
using testing::FakeCluster;

constexpr const char* kNamespace = "flux-system";

json crd(const std::string& group, const std::string& kind, const std::string& plural,
         json stored_versions, json labels = json::object()) {
  labels["app.kubernetes.io/part-of"] = "flux";
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", plural + "." + group}, {"labels", labels}}},
          {"spec", {{"group", group}, {"names", {{"kind", kind}}}}},
          {"status", {{"storedVersions", stored_versions}}}};
}

json object(const std::string& api_version, const std::string& kind, const std::string& ns,
            const std::string& name, json spec = json::object(), json status = json::object()) {
  json result = {{"apiVersion", api_version},
                 {"kind", kind},
                 {"metadata", {{"name", name}, {"namespace", ns}, {"uid", "uid-" + name}}},
                 {"spec", spec}};
  if (!status.empty()) result["status"] = status;
  return result;
}

json ready(const std::string& status, const std::string& reason, const std::string& message = "") {
  return {
      {"conditions",
       json::array(
           {{{"type", "Ready"}, {"status", status}, {"reason", reason}, {"message", message}}})}};
}

// A rolled-out Deployment as the controller leaves it.
json deployment(const std::string& name, const std::string& image) {
  json containers = json::array(
      {{{"name", "manager"}, {"image", image}}, {{"name", "sidecar"}, {"image", "other:1"}}});
  json conditions = json::array(
      {{{"type", "Available"}, {"status", "True"}},
       {{"type", "Progressing"}, {"status", "True"}, {"reason", "NewReplicaSetAvailable"}}});
  json result = {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}};
  result["metadata"] = {{"name", name},
                        {"namespace", kNamespace},
                        {"generation", 2},
                        {"labels", {{"app.kubernetes.io/part-of", "flux"}}}};
  result["spec"] = {{"replicas", 1}, {"progressDeadlineSeconds", 600}};
  result["spec"]["template"]["spec"]["containers"] = containers;
  result["status"] = {{"observedGeneration", 2}, {"replicas", 1},
                      {"updatedReplicas", 1},    {"readyReplicas", 1},
                      {"availableReplicas", 1},  {"conditions", conditions}};
  return result;
}

// A cluster with Flux installed by fluxopctl: the source and kustomize
// CRDs, two controllers, the FluxInstance CRD served.
FakeCluster flux_cluster() {
  FakeCluster cluster;
  for (const char* kind :
       {"/v1/Node", "/v1/Secret", "fluxcd.controlplane.io/v1/FluxInstance",
        "source.toolkit.fluxcd.io/v1/GitRepository", "source.toolkit.fluxcd.io/v1/Bucket",
        "kustomize.toolkit.fluxcd.io/v1/Kustomization"}) {
    cluster.served.insert(kind);
  }
  json labels = {{"app.kubernetes.io/version", "v2.9.4"},
                 {"app.kubernetes.io/managed-by", "flux-operator"}};
  cluster.put(crd("source.toolkit.fluxcd.io", "GitRepository", "gitrepositories", {"v1beta2", "v1"},
                  labels));
  cluster.put(crd("source.toolkit.fluxcd.io", "Bucket", "buckets", {"v1"}, labels));
  cluster.put(
      crd("kustomize.toolkit.fluxcd.io", "Kustomization", "kustomizations", {"v1"}, labels));
  cluster.put(deployment("source-controller", "ghcr.io/fluxcd/source-controller:v1.7.0"));
  cluster.put(deployment("kustomize-controller", "ghcr.io/fluxcd/kustomize-controller:v1.7.0"));
  for (const char* node : {"node-1", "node-2"}) {
    cluster.put({{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", node}}}});
  }
  return cluster;
}

const Reconciler& reconciler(const Report& report, const std::string& kind) {
  for (const Reconciler& found : report.spec.reconcilers) {
    if (found.kind == kind) return found;
  }
  FAIL("no reconciler of kind " << kind);
  throw std::logic_error("unreachable");
}

TEST_CASE("report: the distribution from the GitRepository CRD's labels") {
  FakeCluster cluster = flux_cluster();
  Distribution distribution = compute(cluster, kNamespace, "flux-operator").spec.distribution;
  CHECK(distribution.status == "Installed");
  CHECK(distribution.version == "v2.9.4");
  CHECK(distribution.managed_by == "flux-operator");
  CHECK(distribution.entitlement == "Unknown");

  SUBCASE("installed by flux bootstrap: labelled by its Kustomization") {
    json& labels = cluster.objects.at(
        "CustomResourceDefinition/gitrepositories.source.toolkit."
        "fluxcd.io")["metadata"]["labels"];
    labels.erase("app.kubernetes.io/managed-by");
    labels["kustomize.toolkit.fluxcd.io/name"] = "flux-system";
    CHECK(compute(cluster, kNamespace, "flux-operator").spec.distribution.managed_by ==
          "flux bootstrap");
  }
  SUBCASE("an entitlement secret of the manager's name") {
    cluster.put(
        {{"apiVersion", "v1"},
         {"kind", "Secret"},
         {"metadata", {{"name", "flux-operator-entitlement"}, {"namespace", kNamespace}}},
         {"data", {{"token", base64_encode("t")}, {"vendor", base64_encode("controlplane")}}}});
    CHECK(compute(cluster, kNamespace, "flux-operator").spec.distribution.entitlement ==
          "Issued by controlplane");
    CHECK(compute(cluster, kNamespace, "other").spec.distribution.entitlement == "Unknown");
  }
  SUBCASE("no GitRepository CRD: not installed") {
    cluster.objects.erase("CustomResourceDefinition/gitrepositories.source.toolkit.fluxcd.io");
    Distribution missing = compute(cluster, kNamespace, "flux-operator").spec.distribution;
    CHECK(missing.status == "Not Installed");
    CHECK(missing.version.empty());
    CHECK(missing.managed_by.empty());
  }
}

TEST_CASE("report: the cluster's version, platform and nodes") {
  FakeCluster cluster = flux_cluster();
  cluster.kubernetes_version = "v1.33.1";
  cluster.platform = "linux/arm64";
  Report report = compute(cluster, kNamespace, "flux-operator");
  REQUIRE(report.spec.cluster);
  CHECK(report.spec.cluster->server_version == "v1.33.1");
  CHECK(report.spec.cluster->platform == "linux/arm64");
  CHECK(report.spec.cluster->nodes == 2);
}

TEST_CASE("report: components from the Deployments, by name, with kstatus' words") {
  FakeCluster cluster = flux_cluster();
  json other = deployment("podinfo", "podinfo:1");
  other["metadata"]["labels"]["app.kubernetes.io/part-of"] = "podinfo";
  cluster.put(other);
  Report report = compute(cluster, kNamespace, "flux-operator");
  REQUIRE(report.spec.components.size() == 2);
  const Component& kustomize = report.spec.components[0];
  CHECK(kustomize.name == "kustomize-controller");
  CHECK(kustomize.ready);
  CHECK(kustomize.status == "Current Deployment is available. Replicas: 1");
  CHECK(kustomize.image == "ghcr.io/fluxcd/kustomize-controller:v1.7.0");
  CHECK(report.spec.components[1].name == "source-controller");
}

TEST_CASE("report: a Deployment's kstatus status and message") {
  json rolled_out = deployment("c", "i");
  CHECK(deployment_status(rolled_out).status == "Current");

  // The rolled-out Deployment with one field changed, and what kstatus says.
  struct Variant {
    const char* field;  // a JSON pointer
    json value;
    const char* status;
    const char* message;
  };
  const std::vector<Variant> variants{
      {"/metadata/generation", 3, "InProgress",
       "Deployment generation is 3, but latest observed generation is 2"},
      {"/spec/replicas", 2, "InProgress", "Replicas: 1/2"},
      {"/status/updatedReplicas", 0, "InProgress", "Updated: 0/1"},
      {"/status/replicas", 2, "InProgress", "Pending termination: 1"},
      {"/status/availableReplicas", 0, "InProgress", "Available: 0/1"},
      {"/status/readyReplicas", 0, "InProgress", "Ready: 0/1"},
      {"/status/conditions/1/reason", "ProgressDeadlineExceeded", "Failed",
       "Progress deadline exceeded"},
      {"/status/conditions/1/reason", "ReplicaSetUpdated", "InProgress",
       "ReplicaSet not Available"},
      {"/status/conditions/0/status", "False", "InProgress", "Deployment not Available"},
      {"/metadata/deletionTimestamp", "2026-01-01T00:00:00Z", "Terminating",
       "Resource scheduled for deletion"},
  };
  for (const Variant& variant : variants) {
    CAPTURE(variant.field);
    json changed = rolled_out;
    changed[json::json_pointer(variant.field)] = variant.value;
    DeploymentStatus status = deployment_status(changed);
    CHECK(status.status == variant.status);
    CHECK(status.message == variant.message);
  }

  // Without a deadline the controller sets no Progressing condition: the
  // rollout always counts as progressing.
  json no_deadline = rolled_out;
  no_deadline["status"]["conditions"][1]["reason"] = "ReplicaSetUpdated";
  no_deadline["spec"].erase("progressDeadlineSeconds");
  CHECK(deployment_status(no_deadline).status == "Current");

  json empty = {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"metadata", {{"name", "x"}}}};
  CHECK(deployment_status(empty).message == "Replicas: 0/1");
}

TEST_CASE("report: reconcilers count running, failing and suspended objects per kind") {
  FakeCluster cluster = flux_cluster();
  const char* git = "source.toolkit.fluxcd.io/v1";
  cluster.put(object(git, "GitRepository", "a", "ok", json::object(),
                     {{"conditions", ready("True", "Succeeded")["conditions"]},
                      {"artifact", {{"size", 1024 * 1024}}}}));
  cluster.put(object(git, "GitRepository", "b", "broken", json::object(),
                     {{"conditions", ready("False", "GitOperationFailed")["conditions"]},
                      {"artifact", {{"size", 512 * 1024}}}}));
  // Suspended wins over a failing condition.
  cluster.put(object(git, "GitRepository", "b", "paused", {{"suspend", true}},
                     ready("False", "GitOperationFailed")));
  // A dependency not ready yet is not a failure.
  cluster.put(object("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "a", "waiting",
                     json::object(), ready("False", "DependencyNotReady")));
  cluster.put(object("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "a", "new"));
  // The operator's kinds are suspended by annotation.
  json instance = object("fluxcd.controlplane.io/v1", "FluxInstance", kNamespace, "flux",
                         {{"suspend", true}}, ready("False", "ReconciliationFailed"));
  cluster.put(instance);

  Report report = compute(cluster, kNamespace, "flux-operator");
  CHECK(report.errors.empty());
  std::vector<std::string> order;
  for (const Reconciler& found : report.spec.reconcilers)
    order.push_back(found.api_version + " " + found.kind);
  CHECK(order == std::vector<std::string>{"fluxcd.controlplane.io/v1 FluxInstance",
                                          "kustomize.toolkit.fluxcd.io/v1 Kustomization",
                                          "source.toolkit.fluxcd.io/v1 Bucket",
                                          "source.toolkit.fluxcd.io/v1 GitRepository"});

  const Reconciler& repositories = reconciler(report, "GitRepository");
  CHECK(repositories.stats.running == 2);
  CHECK(repositories.stats.failing == 1);
  CHECK(repositories.stats.suspended == 1);
  CHECK(repositories.stats.total_size == "1.5 MiB");

  const Reconciler& kustomizations = reconciler(report, "Kustomization");
  CHECK(kustomizations.stats.running == 2);
  CHECK(kustomizations.stats.failing == 0);
  CHECK(kustomizations.stats.total_size.empty());

  const Reconciler& buckets = reconciler(report, "Bucket");
  CHECK(buckets.stats.running == 0);

  // .spec.suspend does not suspend a FluxInstance; the annotation does.
  CHECK(reconciler(report, "FluxInstance").stats.failing == 1);
  instance["metadata"]["annotations"]["fluxcd.controlplane.io/reconcile"] = "Disabled";
  cluster.put(instance);
  const Reconciler instances = reconciler(compute(cluster, kNamespace, "m"), "FluxInstance");
  CHECK(instances.stats.suspended == 1);
  CHECK(instances.stats.failing == 0);
  CHECK(instances.stats.running == 0);
}

TEST_CASE("report: the kinds are the Flux CRDs' in their last stored version") {
  FakeCluster cluster = flux_cluster();
  // Served, but not a CRD labelled part of Flux: not reported.
  cluster.served.insert("source.toolkit.fluxcd.io/v1/HelmChart");
  Report report = compute(cluster, kNamespace, "flux-operator");
  CHECK(reconciler(report, "GitRepository").api_version == "source.toolkit.fluxcd.io/v1");
  for (const Reconciler& found : report.spec.reconcilers) CHECK(found.kind != "HelmChart");
  // The operator's kinds that the cluster does not serve are left out.
  for (const Reconciler& found : report.spec.reconcilers) CHECK(found.kind != "ResourceSet");

  SUBCASE("a CRD without stored versions stops the report") {
    cluster.put(crd("source.toolkit.fluxcd.io", "OCIRepository", "ocirepositories", json::array()));
    Report stopped = compute(cluster, kNamespace, "flux-operator");
    CHECK(stopped.errors == std::vector<std::string>{"failed to list CRDs: no stored versions "
                                                     "found for CRD "
                                                     "ocirepositories.source.toolkit.fluxcd.io"});
    CHECK(stopped.spec.reconcilers.empty());
  }
}

TEST_CASE("report: no Flux CRDs: the distribution and the cluster, and why nothing else") {
  FakeCluster cluster = flux_cluster();
  for (const char* name :
       {"gitrepositories.source.toolkit.fluxcd.io", "buckets.source.toolkit.fluxcd.io",
        "kustomizations.kustomize.toolkit.fluxcd.io"}) {
    cluster.objects.erase(std::string("CustomResourceDefinition/") + name);
  }
  Report report = compute(cluster, kNamespace, "flux-operator");
  CHECK(report.errors == std::vector<std::string>{"failed to list CRDs: no Flux CRDs found"});
  CHECK(report.spec.distribution.status == "Not Installed");
  CHECK(report.spec.cluster);
  CHECK(report.spec.components.empty());
  CHECK(report.spec.reconcilers.empty());
  CHECK_FALSE(report.spec.sync);
  CHECK(
      spec_json(report.spec) ==
      json{{"distribution", {{"entitlement", "Unknown"}, {"status", "Not Installed"}}},
           {"cluster", {{"serverVersion", "v1.31.0"}, {"platform", "linux/amd64"}, {"nodes", 2}}}});
}

// The sync the report finds; the test fails when there is none.
Sync reported_sync(FakeCluster& cluster) {
  std::optional<Sync> found = compute(cluster, kNamespace, "m").spec.sync;
  REQUIRE(found);
  return *found;
}

TEST_CASE("report: the sync from the instance's Kustomization and its source") {
  FakeCluster cluster = flux_cluster();
  const char* source = "source.toolkit.fluxcd.io/v1";
  const char* kustomize = "kustomize.toolkit.fluxcd.io/v1";
  json sync = object(kustomize, "Kustomization", kNamespace, "flux-system",
                     {{"path", "clusters/prod"},
                      {"sourceRef", {{"kind", "GitRepository"}, {"name", "flux-system"}}}},
                     ready("True", "ReconciliationSucceeded", "Applied revision: main@sha1:abc"));
  cluster.put(sync);
  json repository = object(source, "GitRepository", kNamespace, "flux-system",
                           {{"url", "https://example.com/fleet.git"}},
                           ready("True", "Succeeded", "stored artifact"));
  cluster.put(repository);

  SUBCASE("no instance: named after the namespace") {
    Sync found = reported_sync(cluster);
    CHECK(found.id == "kustomization/flux-system");
    CHECK(found.path == "clusters/prod");
    CHECK(found.ready);
    CHECK(found.status == "Applied revision: main@sha1:abc");
    CHECK(found.source == "https://example.com/fleet.git");
  }
  SUBCASE("the instance's .spec.sync.name") {
    cluster.put(object("fluxcd.controlplane.io/v1", "FluxInstance", kNamespace, "flux",
                       {{"sync", {{"name", "fleet"}}}}));
    CHECK_FALSE(compute(cluster, kNamespace, "m").spec.sync);  // no Kustomization fleet
    sync["metadata"]["name"] = "fleet";
    cluster.put(sync);
    Sync found = reported_sync(cluster);
    CHECK(found.id == "kustomization/fleet");
    CHECK(found.source.empty());  // the source is looked up by the sync's name
  }
  SUBCASE("a failing source: not ready, its message on a line of its own") {
    repository["status"] = ready("False", "GitOperationFailed", "auth failed");
    cluster.put(repository);
    Sync found = reported_sync(cluster);
    CHECK_FALSE(found.ready);
    CHECK(found.status == "Applied revision: main@sha1:abc\nauth failed");
  }
  SUBCASE("suspended, not yet reconciled") {
    sync["spec"]["suspend"] = true;
    sync.erase("status");
    cluster.put(sync);
    Sync found = reported_sync(cluster);
    CHECK_FALSE(found.ready);
    CHECK(found.status == "Suspended not initialized");
  }
  SUBCASE("a Bucket's endpoint and bucket name") {
    sync["spec"]["sourceRef"]["kind"] = "Bucket";
    cluster.put(sync);
    cluster.put(object(source, "Bucket", kNamespace, "flux-system",
                       {{"endpoint", "minio.example.com"}, {"bucketName", "fleet"}}));
    CHECK(compute(cluster, kNamespace, "m").spec.sync->source == "minio.example.com/fleet");
  }
  SUBCASE("a source kind that is not a Flux CRD") {
    sync["spec"]["sourceRef"]["kind"] = "OCIRepository";
    cluster.put(sync);
    Report report = compute(cluster, kNamespace, "m");
    CHECK_FALSE(report.spec.sync);
    CHECK(report.errors ==
          std::vector<std::string>{
              "failed to compute sync status: source kind OCIRepository not found"});
  }
  SUBCASE("no Kustomization CRD") {
    cluster.objects.erase("CustomResourceDefinition/kustomizations.kustomize.toolkit.fluxcd.io");
    Report report = compute(cluster, kNamespace, "m");
    CHECK_FALSE(report.spec.sync);
    CHECK(report.errors ==
          std::vector<std::string>{
              "failed to compute sync status: source kind Kustomization not found"});
  }
}

TEST_CASE("report: flux_resource_info's labels of every Flux object") {
  FakeCluster cluster = flux_cluster();
  cluster.put(
      object("source.toolkit.fluxcd.io/v1", "GitRepository", "a", "repo",
             {{"url", "https://example.com/x.git"}, {"ref", {{"branch", "main"}, {"tag", "v1"}}}},
             {{"conditions", ready("False", "GitOperationFailed")["conditions"]},
              {"artifact", {{"revision", "main@sha1:abc"}}}}));
  cluster.put(object("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "a", "apps",
                     {{"path", "./apps"}, {"suspend", true}, {"sourceRef", {{"name", "repo"}}}},
                     {{"lastAttemptedRevision", "main@sha1:def"}}));
  cluster.put(object("fluxcd.controlplane.io/v1", "FluxInstance", kNamespace, "flux"));
  Report report = compute(cluster, kNamespace, "m");
  REQUIRE(report.resources.size() == 2);  // the operator's kinds have metrics of their own
  std::map<std::string, ResourceLabels> by_name;
  for (const FluxResource& resource : report.resources)
    by_name[resource.name] = resource_labels(resource);
  CHECK(by_name.at("repo") == ResourceLabels{{"uid", "uid-repo"},
                                             {"kind", "GitRepository"},
                                             {"name", "repo"},
                                             {"exported_namespace", "a"},
                                             {"ready", "False"},
                                             {"reason", "GitOperationFailed"},
                                             {"suspended", "False"},
                                             {"revision", "main@sha1:abc"},
                                             {"url", "https://example.com/x.git"},
                                             {"ref", "v1"},
                                             {"source_name", ""},
                                             {"path", ""}});
  CHECK(by_name.at("apps") == ResourceLabels{{"uid", "uid-apps"},
                                             {"kind", "Kustomization"},
                                             {"name", "apps"},
                                             {"exported_namespace", "a"},
                                             {"ready", "Unknown"},
                                             {"reason", ""},
                                             {"suspended", "True"},
                                             {"revision", "main@sha1:def"},
                                             {"url", ""},
                                             {"ref", ""},
                                             {"source_name", "repo"},
                                             {"path", "./apps"}});
  // A report printed leaves them out, and counts the same.
  Report printed = compute(cluster, kNamespace, "m", Resources::left_out);
  CHECK(printed.resources.empty());
  CHECK(spec_json(printed.spec) == spec_json(report.spec));
}

TEST_CASE("report: sizes as upstream writes them") {
  CHECK(format_size(0).empty());
  CHECK(format_size(1023) == "1023 B");
  CHECK(format_size(1024) == "1.0 KiB");
  CHECK(format_size(1536) == "1.5 KiB");
  CHECK(format_size(3879731) == "3.7 MiB");
  CHECK(format_size(std::int64_t{5} << 40) == "5.0 TiB");
}

TEST_CASE("report: the FluxReport object, optional fields left out when empty") {
  ReportSpec spec;
  spec.cluster = Cluster{"v1.31.0", "linux/amd64", 0};
  spec.components.push_back({"source-controller", true, "Current ok", "img"});
  spec.reconcilers.push_back({"source.toolkit.fluxcd.io/v1", "GitRepository", {1, 0, 0, ""}});
  spec.sync = Sync{"kustomization/flux-system", "", false, "not initialized", ""};
  CHECK(report_object(spec, "ns") ==
        json{{"apiVersion", "fluxcd.controlplane.io/v1"},
             {"kind", "FluxReport"},
             {"metadata", {{"name", "flux"}, {"namespace", "ns"}}},
             {"spec",
              {{"distribution", {{"entitlement", "Unknown"}, {"status", "Unknown"}}},
               {"cluster", {{"serverVersion", "v1.31.0"}, {"platform", "linux/amd64"}}},
               {"components", json::array({{{"name", "source-controller"},
                                            {"ready", true},
                                            {"status", "Current ok"},
                                            {"image", "img"}}})},
               {"reconcilers",
                json::array({{{"apiVersion", "source.toolkit.fluxcd.io/v1"},
                              {"kind", "GitRepository"},
                              {"stats", {{"running", 1}, {"failing", 0}, {"suspended", 0}}}}})},
               {"sync",
                {{"id", "kustomization/flux-system"},
                 {"ready", false},
                 {"status", "not initialized"}}}}}});
}

TEST_CASE("report: written as FluxReport flux, our CRD installed only when there is none") {
  FakeCluster cluster;
  ReportSpec spec;
  spec.distribution.status = "Installed";
  WriteTiming timing{std::chrono::milliseconds(272), "2026-01-02T03:04:05Z",
                     std::chrono::steady_clock::now() + std::chrono::seconds(5)};
  // Discovery learns of the FluxReport kind once the CRD is applied.
  cluster.on_refresh = [&cluster] {
    cluster.served.insert("fluxcd.controlplane.io/v1/FluxReport");
  };

  std::vector<ssa::Change> changes = write(cluster, spec, kNamespace, timing);
  REQUIRE(changes.size() == 2);
  CHECK(ssa::change_line(changes[0]) ==
        "CustomResourceDefinition/fluxreports.fluxcd.controlplane.io created");
  CHECK(ssa::change_line(changes[1]) == "FluxReport/flux-system/flux created");
  const json& written = cluster.objects.at("FluxReport/flux-system/flux");
  CHECK(written["spec"] == spec_json(spec));
  const json& condition = written["status"]["conditions"][0];
  CHECK(condition["type"] == "Ready");
  CHECK(condition["status"] == "True");
  CHECK(condition["reason"] == "ReconciliationSucceeded");
  CHECK(condition["message"] == "Reporting finished in 272ms");
  CHECK(condition["lastTransitionTime"] == "2026-01-02T03:04:05Z");

  SUBCASE("again: the spec unchanged, the CRD not touched") {
    timing.took = std::chrono::milliseconds(1600);
    changes = write(cluster, spec, kNamespace, timing);
    REQUIRE(changes.size() == 1);
    CHECK(ssa::change_line(changes[0]) == "FluxReport/flux-system/flux unchanged");
    CHECK(cluster.logged("APPLY") ==
          std::vector<std::string>{"CustomResourceDefinition/fluxreports.fluxcd.controlplane.io",
                                   "FluxReport/flux-system/flux"});
    CHECK(cluster.objects.at("FluxReport/flux-system/flux")["status"]["conditions"][0]["message"] ==
          "Reporting finished in 2s");
  }
  SUBCASE("a new spec is configured") {
    spec.distribution.version = "v2.9.4";
    changes = write(cluster, spec, kNamespace, timing);
    REQUIRE(changes.size() == 1);
    CHECK(ssa::change_line(changes[0]) == "FluxReport/flux-system/flux configured");
  }
  SUBCASE("a report whose reconciliation is disabled is left alone") {
    cluster.objects.at("FluxReport/flux-system/flux")["metadata"]["annotations"] = {
        {"fluxcd.controlplane.io/reconcile", "disabled"}};
    spec.distribution.version = "v2.9.4";
    changes = write(cluster, spec, kNamespace, timing);
    REQUIRE(changes.size() == 1);
    CHECK(ssa::change_line(changes[0]) == "FluxReport/flux-system/flux skipped");
    CHECK_FALSE(cluster.objects.at("FluxReport/flux-system/flux")["spec"]["distribution"].contains(
        "version"));
  }
}

TEST_CASE("report: another FluxReport CRD (the operator's) is never applied over") {
  FakeCluster cluster;
  cluster.served.insert("fluxcd.controlplane.io/v1/FluxReport");
  json theirs = fluxreport_crd();
  theirs["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "flux-operator"}};
  cluster.put(theirs);
  std::vector<ssa::Change> changes =
      write(cluster, ReportSpec{}, kNamespace,
            {std::chrono::seconds(1), "t", std::chrono::steady_clock::now()});
  REQUIRE(changes.size() == 1);
  CHECK(ssa::change_line(changes[0]) == "FluxReport/flux-system/flux created");
  CHECK(cluster.logged("APPLY") == std::vector<std::string>{"FluxReport/flux-system/flux"});
}

}  // namespace
}  // namespace fluxop::report
