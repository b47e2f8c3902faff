#include "core/ssa/takeover.h"

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
// Managers whose entries go; "before-first-apply" is what the API server
// names the fields of objects created before server-side apply existed.
const std::set<std::string> kForeignManagers = {"flux", "kubectl", "kubectl-client-side-apply",
                                                "helm", "before-first-apply"};

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

}  // namespace

json takeover_patch(const json& live) {
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
    for (const json& entry : metadata["managedFields"]) {
      if (!kForeignManagers.contains(entry.value("manager", ""))) kept.push_back(entry);
    }
    if (kept.size() != metadata["managedFields"].size()) {
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
