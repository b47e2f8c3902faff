#include "core/reconcile/inventory.h"

#include <algorithm>
#include <set>

#include "core/reconcile/instance_object.h"
#include "core/reconcile/uninstall.h"

namespace fluxop::reconcile {

using nlohmann::json;

std::string inventory_id(const kube::ObjectKey& ref) {
  return ref.ns + "_" + ref.name + "_" + ref.group + "_" + ref.kind;
}

json inventory_json(const std::vector<kube::ObjectKey>& refs) {
  json entries = json::array();
  for (const kube::ObjectKey& ref : refs)
    entries.push_back({{"id", inventory_id(ref)}, {"v", ref.version}});
  return {{"entries", entries}};
}

std::vector<kube::ObjectKey> read_inventory(const json& inventory) {
  std::vector<kube::ObjectKey> refs;
  if (!inventory.is_object() || !inventory.contains("entries") || !inventory["entries"].is_array())
    return refs;
  for (const json& entry : inventory["entries"]) {
    if (!entry.is_object() || !entry.value("id", json()).is_string()) continue;
    std::string id = entry["id"];
    // Names, namespaces and groups cannot hold '_' (DNS names), nor can kinds.
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
      std::size_t end = id.find('_', start);
      parts.push_back(id.substr(start, end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    if (parts.size() != 4 || parts[1].empty() || parts[3].empty()) continue;
    refs.push_back({parts[2], entry.value("v", ""), parts[3], parts[0], parts[1]});
  }
  return refs;
}

std::vector<kube::ObjectKey> stale_objects(const std::vector<kube::ObjectKey>& previous,
                                           const std::vector<kube::ObjectKey>& current) {
  std::set<std::string> kept;
  for (const kube::ObjectKey& ref : current) kept.insert(inventory_id(ref));
  std::vector<kube::ObjectKey> stale;
  for (const kube::ObjectKey& ref : previous) {
    if (!kept.contains(inventory_id(ref))) stale.push_back(ref);
  }
  return stale;
}

namespace {

// The kinds a Flux installation is made of, besides the Flux kinds of its
// sync: those of the distribution's manifests and of the render (the
// storage's claim), in apply order, cluster-scoped or in the instance's
// namespace (where the render puts every namespaced object, and all the
// daemon's Role lets it list). Not the namespace itself, which is never
// pruned (`fluxcd.controlplane.io/prune: disabled`).
struct InstalledKind {
  kube::ObjectKey kind;
  bool namespaced;
};
const std::vector<InstalledKind> kInstalledKinds = {
    {{"apiextensions.k8s.io", "v1", "CustomResourceDefinition", "", ""}, false},
    {{"", "v1", "ResourceQuota", "", ""}, true},
    {{"", "v1", "ServiceAccount", "", ""}, true},
    {{"rbac.authorization.k8s.io", "v1", "ClusterRole", "", ""}, false},
    {{"rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "", ""}, false},
    {{"", "v1", "Service", "", ""}, true},
    {{"", "v1", "PersistentVolumeClaim", "", ""}, true},
    {{"apps", "v1", "Deployment", "", ""}, true},
    {{"networking.k8s.io", "v1", "NetworkPolicy", "", ""}, true},
};

// The Flux kinds a sync generates.
const std::set<std::string> kSyncKinds = {"GitRepository", "OCIRepository", "Bucket",
                                          "Kustomization"};

}  // namespace

std::vector<kube::ObjectKey> labelled_objects(kube::Cluster& cluster,
                                              const kube::ObjectKey& instance) {
  std::vector<kube::ListQuery> queries;
  kube::Labels owner = owner_labels(instance);
  for (const auto& [kind, namespaced] : kInstalledKinds) {
    queries.push_back({kind, owner, ""});
    if (namespaced) queries.back().kind.ns = instance.ns;
  }
  for (kube::ObjectKey kind : cluster.served_kinds(kube::is_flux_group)) {
    kind.ns = instance.ns;
    if (kSyncKinds.contains(kind.kind)) queries.push_back({kind, owner, ""});
  }
  return list_keys(cluster, queries);
}

std::vector<kube::ObjectKey> list_keys(kube::Cluster& cluster,
                                       const std::vector<kube::ListQuery>& queries) {
  std::vector<std::vector<kube::ObjectKey>> keys(queries.size());
  cluster.list_each(queries, [&](std::size_t query, json&& object) {
    kube::ObjectKey key = kube::object_key(object);
    key.group = queries[query].kind.group;
    key.version = queries[query].kind.version;
    key.kind = queries[query].kind.kind;
    keys[query].push_back(std::move(key));
  });
  std::vector<kube::ObjectKey> all;
  for (std::vector<kube::ObjectKey>& listed : keys)
    all.insert(all.end(), std::make_move_iterator(listed.begin()),
               std::make_move_iterator(listed.end()));
  return all;
}

bool inventory_lost(const std::vector<std::optional<json>>& live, const kube::Labels& owner) {
  for (const std::optional<json>& object : live) {
    if (!object) continue;
    json labels = object->value("metadata", json::object()).value("labels", json::object());
    if (!labels.is_object()) continue;
    if (std::all_of(owner.begin(), owner.end(), [&](const auto& label) {
          return labels.value(label.first, json()) == label.second;
        }))
      return true;
  }
  return false;
}

std::vector<kube::ObjectKey> with_labelled(std::vector<kube::ObjectKey> inventory,
                                           const std::vector<kube::ObjectKey>& labelled) {
  std::set<std::string> known;
  for (const kube::ObjectKey& ref : inventory) known.insert(inventory_id(ref));
  for (const kube::ObjectKey& ref : labelled) {
    if (known.insert(inventory_id(ref)).second) inventory.push_back(ref);
  }
  return inventory;
}

}  // namespace fluxop::reconcile
