#include "core/reconcile/migrate.h"

namespace fluxop::reconcile {

using nlohmann::json;

std::string storage_version(const json& crd) {
  json::json_pointer versions("/spec/versions");
  if (!crd.contains(versions) || !crd.at(versions).is_array()) return "";
  for (const json& version : crd.at(versions)) {
    if (version.value("storage", false)) return version.value("name", "");
  }
  return "";
}

namespace {

// Writes every object of the CRD's kind back unchanged, in the storage
// version: the API server stores what it is given in that version. An
// object changed meanwhile was stored in it already; one deleted needs
// nothing. The objects are written back in batches, sent together, as the
// list's pages arrive: memory holds a batch, not the list.
int rewrite_objects(kube::Cluster& cluster, const json& crd, const std::string& version) {
  kube::ObjectKey kind{crd["spec"].value("group", ""), version,
                       crd["spec"]["names"].value("kind", ""), "", ""};
  constexpr std::size_t kBatch = 500;
  int rewritten = 0;
  std::vector<json> batch;
  auto write_back = [&] {
    if (batch.empty()) return;
    for (const std::optional<json>& replaced : cluster.replace_all(batch)) {
      if (replaced) ++rewritten;
    }
    batch.clear();
  };
  cluster.list_each({{kind, {}, ""}}, [&](std::size_t, json&& object) {
    batch.push_back(std::move(object));
    if (batch.size() == kBatch) write_back();
  });
  write_back();
  return rewritten;
}

}  // namespace

void migrate_resources(kube::Cluster& cluster, const std::vector<json>& live, bool force,
                       const std::function<void(const std::string&)>& progress) {
  for (const json& crd : live) {
    if (crd.value("kind", "") != "CustomResourceDefinition") continue;
    std::string version = storage_version(crd);
    if (version.empty()) continue;
    json stored = crd.value("status", json::object()).value("storedVersions", json::array());
    if (!force && stored.size() <= 1 && (stored.empty() || stored[0] == version)) continue;
    int rewritten = rewrite_objects(cluster, crd, version);
    cluster.merge_patch_status(kube::object_key(crd), {{"storedVersions", {version}}});
    progress(display_name(kube::object_key(crd)) + ": migrated " + std::to_string(rewritten) +
             " objects to " + version + " (stored versions were " + stored.dump() + ")");
  }
}

}  // namespace fluxop::reconcile
