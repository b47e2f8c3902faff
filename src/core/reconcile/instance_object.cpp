#include "core/reconcile/instance_object.h"

#include "core/share.h"
#include "core/ssa/takeover.h"
#include "core/yaml/json.h"
#include "core/yaml/parse.h"

namespace fluxop::reconcile {

using nlohmann::json;

std::vector<json> rendered_json(const render::Rendered& rendered) {
  std::vector<json> objects;
  objects.reserve(rendered.objects.size());
  for (const yaml::Node& object : rendered.objects) objects.push_back(yaml::to_sorted_json(object));
  return objects;
}

json fluxinstance_crd() {
  std::vector<yaml::Node> documents =
      yaml::parse_documents(std::string(share_manifest("fluxinstance-crd.yaml")),
                            "share/manifests/fluxinstance-crd.yaml");
  return yaml::to_sorted_json(documents.at(0));
}

json instance_object(const json& document, const std::string& name, const std::string& ns) {
  json object = {{"apiVersion", document.value("apiVersion", "")},
                 {"kind", document.value("kind", "")},
                 {"metadata", {{"name", name}, {"namespace", ns}}},
                 {"spec", document.value("spec", json::object())}};
  const json& metadata = document.value("metadata", json::object());
  for (const char* field : {"labels", "annotations"}) {
    if (metadata.contains(field)) object["metadata"][field] = metadata[field];
  }
  return object;
}

json instance_object(const instance::FluxInstance& flux) {
  return instance_object(yaml::to_sorted_json(flux.source), flux.name, flux.ns);
}

namespace {

// Every value of `ours` is in `live` (maps compared key by key, anything
// else whole).
bool values_in(const json& ours, const json& live) {
  if (!ours.is_object()) return ours == live;
  if (!live.is_object()) return false;
  for (const auto& [key, value] : ours.items()) {
    auto there = live.find(key);
    if (there == live.end() || !values_in(value, *there)) return false;
  }
  return true;
}

// Every field a fieldsV1 tree names is one `object` sets (list items are
// not followed: a spec's lists are atomic).
bool owned_within(const json& fields, const json& object) {
  for (const auto& [name, node] : fields.items()) {
    if (name == ".") continue;
    if (!name.starts_with("f:") || !object.is_object()) return false;
    auto value = object.find(name.substr(2));
    if (value == object.end()) return false;
    if (node.is_object() && !node.empty() && !owned_within(node, *value)) return false;
  }
  return true;
}

}  // namespace

bool instance_in_place(const json& object, const json& live, std::string_view manager) {
  // What the manager owns already and does not apply now, its apply would
  // remove: a change.
  for (const json& entry :
       live.value("metadata", json::object()).value("managedFields", json::array())) {
    if (entry.value("manager", "") == manager && entry.value("operation", "") == "Apply" &&
        entry.value("subresource", "").empty() &&
        !owned_within(entry.value("fieldsV1", json::object()), object))
      return false;
  }
  return ssa::takeover_patch(live, manager).is_null() && values_in(object, live);
}

ssa::Owner owner_labels(const kube::ObjectKey& instance) {
  return {{"fluxcd.controlplane.io/name", instance.name},
          {"fluxcd.controlplane.io/namespace", instance.ns}};
}

}  // namespace fluxop::reconcile
