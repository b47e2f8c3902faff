#include "core/ssa/takeover.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "core/kube/meta.h"
#include "core/kube/object.h"
#include "core/ssa/field_ownership.h"

namespace fluxop::ssa {

using kube::pointer_token;
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

bool foreign_label(const std::string& key, const json& value) {
  if (kForeignLabels.contains(key)) return true;
  return value.is_string() && kForeignLabels.contains(key + "=" + value.get<std::string>());
}

// A Namespace is shared: others label and annotate it (a PodSecurity
// level, a service mesh's injection), and what they set stays theirs; the
// engine owns only the fields it applies, so nothing of theirs is taken
// over (their bookkeeping labels still go).
bool shared(const json& live) {
  return live.value("kind", "") == "Namespace" && live.value("apiVersion", "") == "v1";
}

bool own_entry(const json& entry, std::string_view manager) {
  return entry.value("manager", "") == manager && entry.value("operation", "") == "Apply" &&
         entry.value("subresource", "").empty();
}

// What the manager itself changed outside its applies (an Update) in a Flux
// object: the suspension of a sync being pruned, whose deletion then
// failed. Taken over like another tool's edit, so that an apply of the
// object undoes it; the manager's other writes (the FluxInstance's
// finalizer) are not in a Flux object.
bool own_edit(const json& entry, const json& live, std::string_view manager) {
  return entry.value("manager", "") == manager && entry.value("operation", "") == "Update" &&
         entry.value("subresource", "").empty() &&
         kube::is_flux_group(kube::object_key(live).group);
}

// Flux's reconcile requests (the annotations reconcile.fluxcd.io/requestedAt,
// forceAt, resetAt that `flux reconcile` and `kubectl annotate` write to ask
// a controller for a run) are requests, not configuration: taken over, the
// next apply would remove them and diff would call them drift. Their
// writer keeps them.
constexpr std::string_view kRequestPrefix = "f:reconcile.fluxcd.io/";

struct SplitFields {
  json requests = json::object();  // the reconcile requests' annotations
  json rest;                       // everything else
};
SplitFields split_requests(const json& fields) {
  SplitFields out{json::object(), fields.is_object() ? fields : json::object()};
  auto metadata = out.rest.find("f:metadata");
  if (metadata == out.rest.end() || !metadata->is_object()) return out;
  auto annotations = metadata->find("f:annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return out;
  json kept = json::object();
  for (const auto& [key, value] : annotations->items()) {
    if (key.starts_with(kRequestPrefix)) {
      out.requests["f:metadata"]["f:annotations"][key] = value;
    } else {
      kept[key] = value;
    }
  }
  if (names_fields(kept)) {
    *annotations = std::move(kept);
  } else {
    metadata->erase("f:annotations");
    if (!names_fields(*metadata)) out.rest.erase("f:metadata");
  }
  return out;
}

// Whose fields a take-over hands to the manager: all but their reconcile
// requests; an entry holding only requests is left alone.
bool handed_over(const json& entry, const json& live, std::string_view manager) {
  if (!(foreign_manager(entry) && !shared(live)) && !own_edit(entry, live, manager)) return false;
  SplitFields split = split_requests(entry.value("fieldsV1", json::object()));
  return split.requests.empty() || names_fields(split.rest);
}

}  // namespace

std::string foreign_tool(const json& live) {
  json metadata = live.value("metadata", json::object());
  json annotations = metadata.value("annotations", json::object());
  json labels = metadata.value("labels", json::object());
  if (!annotations.is_object()) annotations = json::object();
  if (!labels.is_object()) labels = json::object();
  if (annotations.contains("meta.helm.sh/release-name") ||
      foreign_label("app.kubernetes.io/managed-by",
                    labels.value("app.kubernetes.io/managed-by", json())))
    return "Helm";
  if (labels.contains("kustomize.toolkit.fluxcd.io/name")) return "flux bootstrap";
  bool kubectl = annotations.contains("kubectl.kubernetes.io/last-applied-configuration");
  bool flux = false;
  json entries = shared(live) ? json::array() : metadata.value("managedFields", json::array());
  for (const json& entry : entries.is_array() ? entries : json::array()) {
    if (!entry.is_object() || !foreign_manager(entry) || !handed_over(entry, live, "")) continue;
    std::string name = entry.value("manager", "");
    kubectl = kubectl || name == "kubectl" || name.starts_with("kubectl-");
    flux = flux || name == "flux";
  }
  if (kubectl) return "kubectl";
  return flux ? "flux" : "";
}

json fields_after_takeover(const json& live, std::string_view manager) {
  json taken = json::object();
  json entries = live.value("metadata", json::object()).value("managedFields", json::array());
  for (const json& entry : entries) {
    if (!entry.is_object()) continue;
    if (own_entry(entry, manager)) {
      merge_fields(taken, entry.value("fieldsV1", json::object()));
    } else if (handed_over(entry, live, manager)) {
      merge_fields(taken, split_requests(entry.value("fieldsV1", json::object())).rest);
    }
  }
  taken.erase("f:status");  // the main resource's apply never sets it
  return taken;
}

namespace {

// The edits of the managed fields: the other tools' entries removed and the
// manager's own entry given their fields, index by index, each entry edited
// tested first. Status writes (a rollout's, several a second) edit other
// entries, which are neither tested nor written back: the patch holds
// through them, and what they recorded stays. An entry that moved (the
// server keeps them sorted by time) or changed fails a test, and the patch
// is made anew (Engine::take_over).
void take_managed_fields(const json& live, std::string_view manager, json& operations) {
  if (shared(live)) return;
  const json& entries = live["metadata"]["managedFields"];
  std::vector<std::size_t> foreign;
  std::optional<std::size_t> own_at;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (!entries[i].is_object()) continue;
    if (handed_over(entries[i], live, manager)) {
      foreign.push_back(i);
    } else if (!own_at && own_entry(entries[i], manager)) {
      own_at = i;
    }
  }
  if (foreign.empty()) return;
  auto path = [](std::size_t i) { return "/metadata/managedFields/" + std::to_string(i); };
  std::vector<std::size_t> edited = foreign;
  if (own_at) edited.push_back(*own_at);
  for (std::size_t i : edited) {
    operations.push_back({{"op", "test"}, {"path", path(i)}, {"value", entries[i]}});
  }
  // An entry's reconcile requests stay its own: the entry is cut down to
  // them (in place, before any removal moves the indexes).
  std::vector<std::size_t> removed;
  for (std::size_t i : foreign) {
    json requests = split_requests(entries[i].value("fieldsV1", json::object())).requests;
    if (requests.empty()) {
      removed.push_back(i);
      continue;
    }
    json kept = entries[i];
    kept["fieldsV1"] = std::move(requests);
    operations.push_back({{"op", "replace"}, {"path", path(i)}, {"value", std::move(kept)}});
  }
  for (auto i = removed.rbegin(); i != removed.rend(); ++i) {
    operations.push_back({{"op", "remove"}, {"path", path(*i)}});
  }
  std::size_t left = entries.size() - removed.size();
  if (json taken = fields_after_takeover(live, manager); !taken.empty()) {
    json own = {{"manager", std::string(manager)},
                {"operation", "Apply"},
                {"apiVersion", live.value("apiVersion", "")},
                {"fieldsType", "FieldsV1"},
                {"fieldsV1", std::move(taken)}};
    if (own_at) {
      std::size_t before = static_cast<std::size_t>(std::count_if(
          removed.begin(), removed.end(), [&](std::size_t i) { return i < *own_at; }));
      operations.push_back({{"op", "replace"}, {"path", path(*own_at - before)}, {"value", own}});
    } else {
      operations.push_back({{"op", "add"}, {"path", path(0)}, {"value", own}});
      ++left;
    }
  }
  // An empty list leaves the managed fields as they are; one empty entry
  // clears them (the API server's documented way).
  if (left == 0) {
    operations.push_back(
        {{"op", "add"}, {"path", "/metadata/managedFields/-"}, {"value", json::object()}});
  }
}

}  // namespace

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
    take_managed_fields(live, manager, operations);
  }
  if (operations.empty()) return nullptr;
  return operations;
}

}  // namespace fluxop::ssa
