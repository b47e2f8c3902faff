#include "core/reconcile/instance_object.h"

#include "core/error.h"
#include "core/kube/meta.h"
#include "core/labels.h"
#include "core/reconcile/instance_requests.h"
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

namespace {

// What fluxopctl reads of an object's metadata, as the API server types it.
const json& metadata_schema() {
  static const json schema = json::parse(R"({"type": "object", "properties": {
    "name": {"type": "string"}, "namespace": {"type": "string"},
    "uid": {"type": "string"}, "resourceVersion": {"type": "string"},
    "generation": {"type": "integer"}, "creationTimestamp": {"type": "string"},
    "deletionTimestamp": {"type": "string"},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    "finalizers": {"type": "array", "items": {"type": "string"}},
    "managedFields": {"type": "array", "items": {"type": "object"}}}})");
  return schema;
}

const json& instance_schema() {
  static const json schema = [] {
    json crd = fluxinstance_crd();
    for (json& version : crd["spec"]["versions"]) {
      if (version.value("name", "") != "v1") continue;
      json root = version["schema"]["openAPIV3Schema"];
      root["properties"]["metadata"] = metadata_schema();
      return root;
    }
    throw Error("share/manifests/fluxinstance-crd.yaml: no v1 schema");
  }();
  return schema;
}

bool has_type(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  return true;  // no type: int-or-string, or anything
}

// Whether `value` has the schema's type; what does not, within it, is removed.
bool conform(json& value, const json& schema) {
  if (!has_type(value, schema.value("type", ""))) return false;
  if (value.is_object()) {
    const json& properties = schema.value("properties", json::object());
    const json& additional = schema.value("additionalProperties", json());
    for (auto member = value.begin(); member != value.end();) {
      auto known = properties.find(member.key());
      const json* member_schema = known != properties.end() ? &*known
                                  : additional.is_object()  ? &additional
                                                            : nullptr;
      if (member_schema && !conform(member.value(), *member_schema))
        member = value.erase(member);
      else
        ++member;
    }
  } else if (value.is_array() && schema.contains("items")) {
    const json& items = schema["items"];
    for (auto item = value.begin(); item != value.end();) {
      if (!conform(*item, items))
        item = value.erase(item);
      else
        ++item;
    }
  }
  return true;
}

}  // namespace

std::optional<json> conform_instance(json live) {
  if (!conform(live, instance_schema())) return std::nullopt;
  return live;
}

std::optional<json> get_live_instance(kube::Cluster& cluster, const kube::ObjectKey& ref) {
  std::optional<json> live = cluster.get(ref);
  if (!live) return std::nullopt;
  std::optional<json> conformed = conform_instance(std::move(*live));
  if (!conformed) throw Error(display_name(ref) + ": the API server's answer is not an object");
  return conformed;
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

nlohmann::ordered_json exported_instance(const json& live) {
  json metadata = live.value("metadata", json::object());
  json clean = {{"name", metadata.value("name", "")},
                {"namespace", metadata.value("namespace", "")}};
  if (json labels = metadata.value("labels", json::object()); labels.is_object()) {
    for (std::string_view owner : {kOwnerNameLabel, kOwnerNamespaceLabel})
      labels.erase(std::string(owner));
    if (!labels.empty()) clean["labels"] = labels;
  }
  if (json annotations = metadata.value("annotations", json::object()); annotations.is_object()) {
    annotations.erase(std::string(kRequestedAtAnnotation));
    if (!annotations.empty()) clean["annotations"] = annotations;
  }
  nlohmann::ordered_json object = {{"apiVersion", live.value("apiVersion", "")},
                                   {"kind", live.value("kind", "")},
                                   {"metadata", nlohmann::ordered_json::parse(clean.dump())}};
  if (live.contains("spec")) object["spec"] = nlohmann::ordered_json::parse(live["spec"].dump());
  return object;
}

std::string installed_flux_version(kube::Cluster& cluster, const std::string& ns) {
  kube::ObjectKey instance = instance_ref(ns, "flux");
  if (cluster.has_kind(instance)) {
    if (std::optional<json> live = get_live_instance(cluster, instance)) {
      std::string revision = kube::text_at(*live, "/status/lastAppliedRevision");
      if (!revision.empty()) return revision.substr(0, revision.find('@'));
    }
  }
  std::optional<json> space = cluster.get({"", "v1", "Namespace", "", ns});
  return space ? kube::text_at(*space, "/metadata/labels/" + kube::pointer_token(kVersionLabel))
               : "";
}

ssa::Owner owner_labels(const kube::ObjectKey& instance) {
  return {{std::string(kOwnerNameLabel), instance.name},
          {std::string(kOwnerNamespaceLabel), instance.ns}};
}

}  // namespace fluxop::reconcile
