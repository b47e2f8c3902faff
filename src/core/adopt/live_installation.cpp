#include "core/adopt/live_installation.h"

#include <string_view>

#include "core/ssa/field_ownership.h"
#include "core/yaml/json.h"

namespace fluxop::adopt {

namespace {

using nlohmann::json;

// Struct fields that a Go client applying a typed object writes as `{}`
// and the API server then fills with its defaults. kustomize-controller
// applies so (fluxcd/pkg/ssa normalises native objects through their Go
// types), and owns the field itself with none of what the server put in
// it: it set nothing of it. Only these: a field owned whole is otherwise an
// atomic value (a selector, a roleRef), set in full by its applier.
struct AppliedEmpty {
  std::string_view api_version, kind;
  std::string_view within, field;  // the field, in `within` (empty: at the top)
};
constexpr AppliedEmpty kAppliedEmpty[] = {
    {"apps/v1", "Deployment", "spec", "strategy"},
    {"v1", "Namespace", "", "spec"},
};

// `fields` (a fieldsV1 tree) without the fields of kAppliedEmpty that its
// appliers own with nothing in them.
void drop_applied_empty(json& fields, const json& live) {
  for (const AppliedEmpty& empty : kAppliedEmpty) {
    if (live.value("apiVersion", "") != empty.api_version || live.value("kind", "") != empty.kind) {
      continue;
    }
    json* parent = &fields;
    if (!empty.within.empty()) {
      auto found = parent->find("f:" + std::string(empty.within));
      if (found == parent->end()) continue;
      parent = &*found;
    }
    auto node = parent->find("f:" + std::string(empty.field));
    if (node != parent->end() && node->is_object() && !ssa::names_fields(*node)) {
      parent->erase(node);
    }
  }
}

// What the appliers of an object set: every Apply, and kubectl's writes (a
// hand edit is the user's too); not the controllers' updates, nor status.
json applied_fields(const json& live) {
  json fields = json::object();
  const json* managed = nullptr;
  if (live.contains("metadata") && live["metadata"].contains("managedFields")) {
    managed = &live["metadata"]["managedFields"];
  }
  if (!managed || !managed->is_array()) return fields;
  for (const json& entry : *managed) {
    if (!entry.is_object() || !entry.value("subresource", "").empty()) continue;
    std::string manager = entry.value("manager", "");
    if (entry.value("operation", "") != "Apply" && !manager.starts_with("kubectl")) continue;
    if (entry.contains("fieldsV1")) ssa::merge_fields(fields, entry["fieldsV1"]);
  }
  drop_applied_empty(fields, live);
  return fields;
}

}  // namespace

Installation read_cluster(kube::Cluster& cluster, const std::string& ns) {
  kube::Labels bootstrap{{"app.kubernetes.io/part-of", "flux"}, {"app.kubernetes.io/instance", ns}};
  std::vector<kube::ListQuery> queries = {
      {{"", "v1", "Namespace", "", ""}, {}, ns},
      {{"apiextensions.k8s.io", "v1", "CustomResourceDefinition", "", ""}, bootstrap, ""},
      {{"rbac.authorization.k8s.io", "v1", "ClusterRole", "", ""}, bootstrap, ""},
      {{"rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "", ""}, bootstrap, ""},
      {{"", "v1", "ResourceQuota", ns, ""}, bootstrap, ""},
      {{"", "v1", "ServiceAccount", ns, ""}, bootstrap, ""},
      {{"", "v1", "Service", ns, ""}, bootstrap, ""},
      {{"apps", "v1", "Deployment", ns, ""}, bootstrap, ""},
      {{"networking.k8s.io", "v1", "NetworkPolicy", ns, ""}, bootstrap, ""},
  };
  // The sync's objects, in the versions the server prefers.
  for (kube::ObjectKey kind : cluster.served_kinds([](std::string_view group) {
         return group == "source.toolkit.fluxcd.io" || group == "kustomize.toolkit.fluxcd.io";
       })) {
    if (kind.kind != "Kustomization" && kind.kind != "GitRepository" &&
        kind.kind != "OCIRepository" && kind.kind != "Bucket") {
      continue;
    }
    kind.ns = ns;
    queries.push_back({kind, {}, ns});
  }
  Installation installation;
  installation.origin = "namespace " + ns;
  for (std::vector<json>& list : cluster.list_all(queries)) {
    for (json& live : list) {
      installation.objects.push_back(
          yaml::from_json(nlohmann::ordered_json(ssa::owned_part(live, applied_fields(live)))));
    }
  }
  installation.unpatched = installation.objects;
  return installation;
}

}  // namespace fluxop::adopt
