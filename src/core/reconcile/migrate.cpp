#include "core/reconcile/migrate.h"

#include "core/error.h"
#include "core/kube/patch_listed.h"

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

// The patch that has the API server store the object again in the storage
// version `api_version`: an empty merge patch, which the server decodes,
// encodes in the storage version and writes when that differs from what it
// stores (an object stored in it already costs no write). The managed
// fields recorded at an older version move to the new one, as the operator
// does, so that a later Flux can drop it: a JSON patch at the object's
// resourceVersion, made again if the object moved meanwhile.
kube::ObjectPatch migration_patch(const json& object, const std::string& api_version) {
  kube::ObjectPatch patch{kube::object_key(object), kube::ObjectPatch::Type::Merge, json::object()};
  const json& metadata = object.value("metadata", json::object());
  json entries = metadata.value("managedFields", json::array());
  bool older = false;
  for (json& entry : entries) {
    if (!entry.is_object() || entry.value("apiVersion", api_version) == api_version) continue;
    entry["apiVersion"] = api_version;
    older = true;
  }
  if (!older) return patch;
  patch.type = kube::ObjectPatch::Type::Json;
  patch.patch = json::array(
      {{{"op", "test"},
        {"path", "/metadata/resourceVersion"},
        {"value", metadata.value("resourceVersion", "")}},
       {{"op", "replace"}, {"path", "/metadata/managedFields"}, {"value", std::move(entries)}}});
  return patch;
}

// Patches every object of the CRD's kind, listed in the storage version; an
// object deleted meanwhile needs nothing.
int rewrite_objects(kube::Cluster& cluster, const json& crd, const std::string& version) {
  std::string group = crd["spec"].value("group", "");
  kube::ObjectKey kind{group, version, crd["spec"]["names"].value("kind", ""), "", ""};
  std::string api_version = group.empty() ? version : group + "/" + version;
  kube::ListedPatches work{{{kind, {}, ""}},
                           [&api_version](std::size_t, const json& object) {
                             return std::optional(migration_patch(object, api_version));
                           },
                           {}};
  return kube::patch_listed(cluster, work).front();
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
    int rewritten = 0;
    try {
      rewritten = rewrite_objects(cluster, crd, version);
    } catch (const Error& e) {
      // storedVersions stays as it was: the next apply migrates again.
      throw Error(display_name(kube::object_key(crd)) + ": the migration to " + version +
                  " stopped: " + e.what());
    }
    cluster.merge_patch_status(kube::object_key(crd), {{"storedVersions", {version}}});
    progress(display_name(kube::object_key(crd)) + ": migrated " + std::to_string(rewritten) +
             " objects to " + version + " (stored versions were " + stored.dump() + ")");
  }
}

}  // namespace fluxop::reconcile
