#include "core/reconcile/inventory.h"

#include <set>

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

}  // namespace fluxop::reconcile
