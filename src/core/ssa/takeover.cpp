#include "core/ssa/takeover.h"

#include <algorithm>
#include <set>
#include <string>

namespace fluxop::ssa {

using nlohmann::json;

namespace {

const std::set<std::string> kForeignAnnotations = {
    "kubectl.kubernetes.io/last-applied-configuration", "meta.helm.sh/release-name",
    "meta.helm.sh/release-namespace"};
const std::set<std::string> kForeignLabels = {"kustomize.toolkit.fluxcd.io/name",
                                              "kustomize.toolkit.fluxcd.io/namespace",
                                              "app.kubernetes.io/managed-by=Helm"};
// Managers whose fields are taken over: other tools, and kubectl's
// commands (kubectl-edit, kubectl-patch, kubectl-client-side-apply, ...)
// but its rollout restart. "before-first-apply" is what the API server
// names the fields of an object that had no managed fields (created before
// server-side apply, or stripped).
const std::set<std::string, std::less<>> kForeignManagers = {"flux", "kubectl", "helm",
                                                             "before-first-apply"};

bool foreign_manager(const json& entry) {
  std::string name = entry.value("manager", "");
  if (entry.value("subresource", "") == "status") return false;
  if (name == "kubectl-rollout") return false;
  return kForeignManagers.contains(name) || name.starts_with("kubectl-");
}

// The union of two fieldsV1 trees.
void add_fields(json& into, const json& fields) {
  if (!fields.is_object()) return;
  for (const auto& [key, value] : fields.items()) {
    if (!into.contains(key)) into[key] = json::object();
    add_fields(into[key], value);
  }
}

// RFC 6901 escaping of a map key in a path.
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

bool foreign_label(const std::string& key, const json& value) {
  if (kForeignLabels.contains(key)) return true;
  return value.is_string() && kForeignLabels.contains(key + "=" + value.get<std::string>());
}

bool own_entry(const json& entry, std::string_view manager) {
  return entry.value("manager", "") == manager && entry.value("operation", "") == "Apply" &&
         entry.value("subresource", "").empty();
}

}  // namespace

json fields_after_takeover(const json& live, std::string_view manager) {
  json taken = json::object();
  json entries = live.value("metadata", json::object()).value("managedFields", json::array());
  for (const json& entry : entries) {
    if (entry.is_object() && (foreign_manager(entry) || own_entry(entry, manager))) {
      add_fields(taken, entry.value("fieldsV1", json::object()));
    }
  }
  taken.erase("f:status");  // the main resource's apply never sets it
  return taken;
}

json takeover_patch(const json& live, std::string_view manager) {
  const json& metadata = live.value("metadata", json::object());
  json operations = json::array();
  for (const auto& [field, foreign] :
       {std::pair{"annotations", false}, std::pair{"labels", true}}) {
    if (!metadata.contains(field) || !metadata[field].is_object()) continue;
    for (const auto& [key, value] : metadata[field].items()) {
      bool drop = foreign ? foreign_label(key, value) : kForeignAnnotations.contains(key);
      if (drop) {
        operations.push_back(
            {{"op", "remove"},
             {"path", std::string("/metadata/") + field + "/" + pointer_token(key)}});
      }
    }
  }
  if (metadata.contains("managedFields") && metadata["managedFields"].is_array()) {
    json kept = json::array();
    json taken = fields_after_takeover(live, manager);
    bool foreign = false;
    std::size_t ours = 0;  // where the manager's own entry goes
    json own;
    for (const json& entry : metadata["managedFields"]) {
      if (!entry.is_object()) continue;
      if (foreign_manager(entry)) {
        foreign = true;
        continue;
      }
      if (own_entry(entry, manager)) {
        ours = kept.size();
        own = entry;
        continue;
      }
      kept.push_back(entry);
    }
    if (foreign) {
      if (!taken.empty()) {
        own = {{"manager", std::string(manager)},
               {"operation", "Apply"},
               {"apiVersion", live.value("apiVersion", "")},
               {"fieldsType", "FieldsV1"},
               {"fieldsV1", taken}};
      }
      if (!own.is_null()) {
        kept.insert(kept.begin() + static_cast<std::ptrdiff_t>(std::min(ours, kept.size())), own);
      }
      // An empty list leaves the managed fields as they are; one empty
      // entry clears them (the API server's documented way).
      if (kept.empty()) kept.push_back(json::object());
      operations.push_back(
          {{"op", "replace"}, {"path", "/metadata/managedFields"}, {"value", kept}});
    }
  }
  if (operations.empty()) return nullptr;
  json guard = {{"op", "test"},
                {"path", "/metadata/resourceVersion"},
                {"value", metadata.value("resourceVersion", "")}};
  operations.insert(operations.begin(), std::move(guard));
  return operations;
}

}  // namespace fluxop::ssa
