#include "core/report/report.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>

#include "core/base64.h"
#include "core/display.h"
#include "core/kube/meta.h"
#include "core/labels.h"

namespace fluxop::report {

using kube::array_at;
using kube::at;
using kube::condition_at;
using kube::integer_at;
using kube::string_at;
using kube::string_member;
using kube::true_at;
using nlohmann::json;

namespace {

constexpr const char* kPartOf = "app.kubernetes.io/part-of";
// The instance name the operator's reporter selects the Flux objects by,
// whatever the FluxInstance is called (it can only be called "flux").
constexpr const char* kInstance = "flux";
constexpr const char* kOperatorGroup = "fluxcd.controlplane.io";
// The operator's own reconcilers, reported beside Flux's (suspended by
// annotation instead of .spec.suspend, no artifacts).
constexpr std::string_view kOperatorKinds[] = {"FluxInstance", "ResourceSet",
                                               "ResourceSetInputProvider"};

// Counted as failing: a Ready condition False for another reason than a
// dependency not ready yet.
bool failing(const json& object) {
  const json* ready = condition_at(object, "Ready");
  return ready && string_member(*ready, "status") == "False" &&
         string_member(*ready, "reason") != "DependencyNotReady";
}

std::string name_of(const json& object) {
  return string_member(object.value("metadata", json::object()), "name");
}

std::string namespace_of(const json& object) {
  return string_member(object.value("metadata", json::object()), "namespace");
}

Distribution distribution(const std::optional<json>& gitrepositories_crd,
                          const std::optional<json>& entitlement_secret) {
  Distribution result;
  if (gitrepositories_crd) {
    result.status = "Installed";
    json labels =
        gitrepositories_crd->value("metadata", json::object()).value("labels", json::object());
    if (labels.contains(kVersionLabel)) result.version = string_member(labels, kVersionLabel);
    if (labels.contains("app.kubernetes.io/managed-by"))
      result.managed_by = string_member(labels, "app.kubernetes.io/managed-by");
    else if (labels.contains("kustomize.toolkit.fluxcd.io/name"))
      result.managed_by = "flux bootstrap";
  } else {
    result.status = "Not Installed";
  }
  if (entitlement_secret) {
    json data = entitlement_secret->value("data", json::object());
    if (data.contains("token")) {
      result.entitlement = "Issued";
      if (data.contains("vendor")) {
        result.entitlement += " by " + base64_decode(string_member(data, "vendor")).value_or("");
      }
    }
  }
  return result;
}

// A Flux kind the reporter lists: from a Flux CRD, in its newest stored
// version, or one of the operator's.
struct ReportedKind {
  kube::ObjectKey key;
  bool operator_kind = false;
};

// The kinds of the CRDs labelled as part of the instance, each in the last
// of its stored versions; nullopt and the error when there are none.
std::optional<std::vector<ReportedKind>> flux_kinds(const std::vector<json>& crds,
                                                    std::vector<std::string>& errors) {
  if (crds.empty()) {
    errors.push_back("failed to list CRDs: no Flux CRDs found");
    return std::nullopt;
  }
  std::vector<ReportedKind> kinds;
  for (const json& crd : crds) {
    const json* stored = at(crd, "/status/storedVersions");
    if (!stored || !stored->is_array() || stored->empty() || !stored->back().is_string()) {
      errors.push_back("failed to list CRDs: no stored versions found for CRD " + name_of(crd));
      return std::nullopt;
    }
    kinds.push_back({{string_at(crd, "/spec/group").value_or(""), stored->back().get<std::string>(),
                      string_at(crd, "/spec/names/kind").value_or(""), "", ""},
                     false});
  }
  return kinds;
}

Component component(const json& deployment) {
  DeploymentStatus status = deployment_status(deployment);
  Component result{name_of(deployment), status.status == "Current",
                   status.status + " " + status.message, ""};
  const json* containers = at(deployment, "/spec/template/spec/containers");
  if (containers && containers->is_array() && !containers->empty() &&
      containers->front().is_object()) {
    result.image = string_member(containers->front(), "image");
  }
  return result;
}

// A kind's objects counted one at a time, as they arrive.
struct KindTally {
  int total = 0;
  int suspended = 0;
  int failed = 0;
  std::int64_t size = 0;

  void count(const ReportedKind& kind, const json& object) {
    ++total;
    // Suspended wins over the Ready condition.
    bool is_suspended =
        kind.operator_kind ? reconcile_disabled(object) : true_at(object, "/spec/suspend");
    if (is_suspended)
      ++suspended;
    else if (failing(object))
      ++failed;
    if (!kind.operator_kind) size += integer_at(object, "/status/artifact/size").value_or(0);
  }
};

Reconciler reconciler(const ReportedKind& kind, const KindTally& tally) {
  return {kind.key.group + "/" + kind.key.version,
          kind.key.kind,
          {tally.total - tally.suspended, tally.failed, tally.suspended, format_size(tally.size)}};
}

// What the report keeps of one Flux object; later fields win over earlier
// ones, as upstream sets flux_resource_info's labels in turn.
FluxResource flux_resource(const json& object) {
  FluxResource resource;
  resource.kind = string_member(object, "kind");
  json metadata = object.value("metadata", json::object());
  resource.uid = string_member(metadata, "uid");
  resource.name = string_member(metadata, "name");
  resource.ns = string_member(metadata, "namespace");
  resource.created = string_member(metadata, "creationTimestamp");
  resource.suspended = true_at(object, "/spec/suspend");
  if (const json* ready = condition_at(object, "Ready")) {
    resource.ready = string_member(*ready, "status");
    resource.reason = string_member(*ready, "reason");
    resource.message = printable_within(string_member(*ready, "message"), kMaxResourceMessage);
  }
  if (const json* reconciling = condition_at(object, "Reconciling"))
    resource.reconciling = string_member(*reconciling, "status") == "True";
  auto set = [&](std::string& field, const char* pointer) {
    if (std::optional<std::string> value = string_at(object, pointer)) field = *value;
  };
  set(resource.source_name, "/spec/sourceRef/name");
  set(resource.revision, "/status/artifact/revision");
  set(resource.revision, "/status/lastAttemptedRevision");
  set(resource.url, "/spec/url");
  const std::string& kind = resource.kind;
  if (kind == "Kustomization") {
    set(resource.path, "/spec/path");
  } else if (kind == "GitRepository") {
    for (const char* ref :
         {"/spec/ref/branch", "/spec/ref/tag", "/spec/ref/semver", "/spec/ref/name"})
      set(resource.ref, ref);
  } else if (kind == "OCIRepository") {
    for (const char* ref : {"/spec/ref/tag", "/spec/ref/semver"}) set(resource.ref, ref);
  } else if (kind == "Bucket") {
    set(resource.url, "/spec/endpoint");
    set(resource.ref, "/spec/bucketName");
  } else if (kind == "HelmRelease") {
    set(resource.source_name, "/spec/chartRef/name");
    set(resource.source_name, "/spec/chart/spec/sourceRef/name");
  } else if (kind == "HelmRepository") {
    if (string_at(object, "/spec/type") == "oci") resource.ready = "True";
  } else if (kind == "Alert" || kind == "Provider") {
    resource.ready = "True";  // they have no Ready condition any more
  } else if (kind == "Receiver") {
    set(resource.url, "/status/webhookPath");
  } else if (kind == "ImageRepository") {
    set(resource.url, "/spec/image");
  } else if (kind == "ImagePolicy") {
    set(resource.source_name, "/spec/imageRepositoryRef/name");
  }
  return resource;
}

const json* find_object(const std::vector<json>& objects, const std::string& ns,
                        const std::string& name) {
  for (const json& object : objects) {
    if (namespace_of(object) == ns && name_of(object) == name) return &object;
  }
  return nullptr;
}

// The objects of the first Flux kind called `kind`; null when no Flux CRD
// has it.
const std::vector<json>* objects_of_kind(const std::vector<ReportedKind>& kinds,
                                         const std::vector<std::vector<json>>& lists,
                                         std::string_view kind) {
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (!kinds[i].operator_kind && kinds[i].key.kind == kind) return &lists[i];
  }
  return nullptr;
}

// The name of the instance's sync: .spec.sync.name, else the namespace's.
std::string instance_sync_name(const std::vector<json>& instances, const std::string& ns) {
  if (!instances.empty()) {
    std::string named = string_at(instances.front(), "/spec/sync/name").value_or("");
    if (!named.empty()) return named;
  }
  return ns;
}

// The instance's sync: its Kustomization (named `sync_name`) and the source
// of the same name. `lists` holds, for each kind, its objects of that name
// in `ns`: all the sync needs of a list.
std::optional<Sync> sync(const std::vector<ReportedKind>& kinds,
                         const std::vector<std::vector<json>>& lists, const std::string& sync_name,
                         const std::string& ns, std::vector<std::string>& errors) {
  const std::vector<json>* kustomizations = objects_of_kind(kinds, lists, "Kustomization");
  if (!kustomizations) {
    errors.push_back("failed to compute sync status: source kind Kustomization not found");
    return std::nullopt;
  }
  const json* kustomization = find_object(*kustomizations, ns, sync_name);
  if (!kustomization) return std::nullopt;  // no sync configured

  Sync result{"kustomization/" + sync_name, string_at(*kustomization, "/spec/path").value_or(""),
              false, "not initialized", ""};
  if (const json* ready = condition_at(*kustomization, "Ready")) {
    result.ready = string_member(*ready, "status") != "False";
    result.status = string_member(*ready, "message");
  }
  if (std::optional<std::string> source_kind = string_at(*kustomization, "/spec/sourceRef/kind")) {
    const std::vector<json>* sources = objects_of_kind(kinds, lists, *source_kind);
    if (!sources) {
      errors.push_back("failed to compute sync status: source kind " + *source_kind + " not found");
      return std::nullopt;
    }
    // Upstream looks the source up by the sync's name, not by the sourceRef.
    if (const json* source = find_object(*sources, ns, sync_name)) {
      if (*source_kind == "Bucket") {
        if (std::optional<std::string> endpoint = string_at(*source, "/spec/endpoint"))
          result.source = *endpoint + "/" + string_at(*source, "/spec/bucketName").value_or("");
      } else if (std::optional<std::string> url = string_at(*source, "/spec/url")) {
        result.source = *url;
      }
      if (const json* ready = condition_at(*source, "Ready");
          ready && string_member(*ready, "status") == "False") {
        result.ready = false;
        result.status += "\n" + string_member(*ready, "message");
      }
    }
  }
  if (true_at(*kustomization, "/spec/suspend")) result.status = "Suspended " + result.status;
  return result;
}

}  // namespace

ResourceLabels resource_labels(const FluxResource& resource) {
  return {{"uid", resource.uid},
          {"kind", resource.kind},
          {"name", resource.name},
          {"exported_namespace", resource.ns},
          {"ready", resource.ready},
          {"reason", resource.reason},
          {"suspended", resource.suspended ? "True" : "False"},
          {"revision", resource.revision},
          {"url", resource.url},
          {"ref", resource.ref},
          {"source_name", resource.source_name},
          {"path", resource.path}};
}

bool reconcile_disabled(const json& object) {
  return kube::any_in_metadata(object, "fluxcd.controlplane.io/reconcile", "disabled");
}

DeploymentStatus deployment_status(const json& deployment) {
  if (!string_at(deployment, "/metadata/deletionTimestamp").value_or("").empty())
    return {"Terminating", "Resource scheduled for deletion"};
  std::optional<std::int64_t> generation = integer_at(deployment, "/metadata/generation");
  std::optional<std::int64_t> observed = integer_at(deployment, "/status/observedGeneration");
  if (generation && observed && *generation != *observed) {
    return {"InProgress", "Deployment generation is " + std::to_string(*generation) +
                              ", but latest observed generation is " + std::to_string(*observed)};
  }
  const json& found = array_at(deployment, "/status/conditions");
  for (const json& condition : found) {
    if (string_member(condition, "status") != "True") continue;
    if (string_member(condition, "type") == "Reconciling")
      return {"InProgress", string_member(condition, "message")};
    if (string_member(condition, "type") == "Stalled")
      return {"Failed", string_member(condition, "message")};
  }
  // Without a progress deadline the controller sets no Progressing
  // condition: the rollout counts as progressing.
  bool progressing = !integer_at(deployment, "/spec/progressDeadlineSeconds") ||
                     integer_at(deployment, "/spec/progressDeadlineSeconds") ==
                         std::numeric_limits<std::int32_t>::max();
  bool available = false;
  for (const json& condition : found) {
    std::string type = string_member(condition, "type");
    if (type == "Progressing") {
      if (string_member(condition, "reason") == "ProgressDeadlineExceeded")
        return {"Failed", "Progress deadline exceeded"};
      if (string_member(condition, "status") == "True" &&
          string_member(condition, "reason") == "NewReplicaSetAvailable")
        progressing = true;
    } else if (type == "Available" && string_member(condition, "status") == "True") {
      available = true;
    }
  }
  std::int64_t wanted = integer_at(deployment, "/spec/replicas").value_or(1);
  std::int64_t replicas = integer_at(deployment, "/status/replicas").value_or(0);
  std::int64_t updated = integer_at(deployment, "/status/updatedReplicas").value_or(0);
  std::int64_t ready = integer_at(deployment, "/status/readyReplicas").value_or(0);
  std::int64_t available_replicas = integer_at(deployment, "/status/availableReplicas").value_or(0);
  auto ratio = [](std::int64_t have, std::int64_t of) {
    return std::to_string(have) + "/" + std::to_string(of);
  };
  if (wanted > replicas) return {"InProgress", "Replicas: " + ratio(replicas, wanted)};
  if (wanted > updated) return {"InProgress", "Updated: " + ratio(updated, wanted)};
  if (replicas > wanted)
    return {"InProgress", "Pending termination: " + std::to_string(replicas - wanted)};
  if (updated > available_replicas)
    return {"InProgress", "Available: " + ratio(available_replicas, updated)};
  if (wanted > ready) return {"InProgress", "Ready: " + ratio(ready, wanted)};
  if (!progressing) return {"InProgress", "ReplicaSet not Available"};
  if (!available) return {"InProgress", "Deployment not Available"};
  return {"Current", "Deployment is available. Replicas: " + std::to_string(replicas)};
}

std::string format_size(std::int64_t bytes) {
  if (bytes == 0) return "";
  constexpr std::int64_t kUnit = 1024;
  if (bytes < kUnit) return std::to_string(bytes) + " B";
  std::int64_t divisor = kUnit;
  int exponent = 0;
  for (std::int64_t n = bytes / kUnit; n >= kUnit; n /= kUnit) {
    divisor *= kUnit;
    ++exponent;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %ciB",
                static_cast<double>(bytes) / static_cast<double>(divisor), "KMGTPE"[exponent]);
  return text;
}

Report compute(kube::Cluster& cluster, const std::string& ns, const std::string& manager,
               Resources resources) {
  Report report;
  kube::ObjectKey crd_kind{"apiextensions.k8s.io", "v1", "CustomResourceDefinition", "", ""};
  kube::Labels flux_objects{{kPartOf, kInstance}};
  std::vector<std::vector<json>> found = cluster.list_all({
      {crd_kind, {}, "gitrepositories.source.toolkit.fluxcd.io"},
      {crd_kind, flux_objects, ""},
      {{"apps", "v1", "Deployment", ns, ""}, flux_objects, ""},
      {{"", "v1", "Node", "", ""}, {}, ""},
      {{kOperatorGroup, "v1", "FluxInstance", ns, ""}, {}, ""},
  });
  // Upstream reads the entitlement whatever may go wrong: no access to
  // secrets leaves it Unknown.
  std::optional<json> entitlement;
  try {
    entitlement = cluster.get({"", "v1", "Secret", ns, manager + "-entitlement"});
  } catch (const kube::ApiError&) {
  }
  report.spec.distribution =
      distribution(found[0].empty() ? std::nullopt : std::optional(found[0].front()), entitlement);
  kube::ServerVersion server = cluster.server_version();
  report.spec.cluster =
      Cluster{server.git_version, server.platform, static_cast<int>(found[3].size())};

  std::optional<std::vector<ReportedKind>> kinds = flux_kinds(found[1], report.errors);
  if (!kinds) return report;

  for (const json& deployment : found[2]) report.spec.components.push_back(component(deployment));
  std::stable_sort(report.spec.components.begin(), report.spec.components.end(),
                   [](const Component& a, const Component& b) { return a.name < b.name; });

  // The operator's kinds that are served (no operator, no ResourceSets).
  for (const kube::ObjectKey& served :
       cluster.served_kinds([](std::string_view group) { return group == kOperatorGroup; })) {
    if (std::find(std::begin(kOperatorKinds), std::end(kOperatorKinds), served.kind) !=
        std::end(kOperatorKinds))
      kinds->push_back({served, true});
  }
  // Each object is reduced to what the report keeps as soon as it arrives:
  // the counts, the resource's labels, and the sync's candidates. A list
  // read whole costs the API server less than in pages, and decoded as it
  // streams holds one object at a time.
  std::string synced = instance_sync_name(found[4], ns);
  std::vector<kube::ListQuery> queries;
  for (const ReportedKind& kind : *kinds) queries.push_back({kind.key, {}, ""});
  std::vector<KindTally> tallies(kinds->size());
  std::vector<std::vector<json>> sync_candidates(kinds->size());
  cluster.list_streamed(queries, [&](std::size_t i, json&& object) {
    const ReportedKind& kind = (*kinds)[i];
    tallies[i].count(kind, object);
    if (kind.operator_kind) return;
    if (resources == Resources::listed) report.resources.push_back(flux_resource(object));
    if (namespace_of(object) == ns && name_of(object) == synced)
      sync_candidates[i].push_back(std::move(object));
  });
  for (std::size_t i = 0; i < kinds->size(); ++i)
    report.spec.reconcilers.push_back(reconciler((*kinds)[i], tallies[i]));
  std::stable_sort(report.spec.reconcilers.begin(), report.spec.reconcilers.end(),
                   [](const Reconciler& a, const Reconciler& b) {
                     return a.api_version + a.kind < b.api_version + b.kind;
                   });
  report.spec.sync = sync(*kinds, sync_candidates, synced, ns, report.errors);
  return report;
}

json spec_json(const ReportSpec& spec) {
  json out = json::object();
  json distribution = {{"entitlement", spec.distribution.entitlement},
                       {"status", spec.distribution.status}};
  if (!spec.distribution.version.empty()) distribution["version"] = spec.distribution.version;
  if (!spec.distribution.managed_by.empty())
    distribution["managedBy"] = spec.distribution.managed_by;
  out["distribution"] = std::move(distribution);
  if (spec.cluster) {
    json cluster = {{"serverVersion", spec.cluster->server_version},
                    {"platform", spec.cluster->platform}};
    if (spec.cluster->nodes != 0) cluster["nodes"] = spec.cluster->nodes;
    out["cluster"] = std::move(cluster);
  }
  for (const Component& component : spec.components) {
    out["components"].push_back({{"name", component.name},
                                 {"ready", component.ready},
                                 {"status", component.status},
                                 {"image", component.image}});
  }
  for (const Reconciler& reconciler : spec.reconcilers) {
    json stats = {{"running", reconciler.stats.running},
                  {"failing", reconciler.stats.failing},
                  {"suspended", reconciler.stats.suspended}};
    if (!reconciler.stats.total_size.empty()) stats["totalSize"] = reconciler.stats.total_size;
    out["reconcilers"].push_back(
        {{"apiVersion", reconciler.api_version}, {"kind", reconciler.kind}, {"stats", stats}});
  }
  if (spec.sync) {
    json sync = {{"id", spec.sync->id}, {"ready", spec.sync->ready}, {"status", spec.sync->status}};
    if (!spec.sync->path.empty()) sync["path"] = spec.sync->path;
    if (!spec.sync->source.empty()) sync["source"] = spec.sync->source;
    out["sync"] = std::move(sync);
  }
  return out;
}

json report_object(const ReportSpec& spec, const std::string& ns) {
  return {{"apiVersion", "fluxcd.controlplane.io/v1"},
          {"kind", "FluxReport"},
          {"metadata", {{"name", kInstance}, {"namespace", ns}}},
          {"spec", spec_json(spec)}};
}

}  // namespace fluxop::report
