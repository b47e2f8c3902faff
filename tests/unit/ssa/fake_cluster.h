// A cluster in memory for unit tests of the engine and the policies on top:
// objects by key, server-side apply reduced to "the applied object plus the
// server's fields", every request recorded in order, and answers scripted
// where a test needs the server to refuse.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ssa/cluster_api.h"

namespace fluxop::testing {

using nlohmann::json;

class FakeCluster : public ssa::ClusterApi {
 public:
  explicit FakeCluster(bool dry_run = false) : dry_run_(dry_run) {
    for (const char* kind :
         {"/v1/Namespace", "/v1/ConfigMap", "/v1/Service", "/v1/ServiceAccount",
          "apps/v1/Deployment", "apiextensions.k8s.io/v1/CustomResourceDefinition",
          "coordination.k8s.io/v1/Lease"}) {
      served.insert(kind);
    }
  }

  // What the fake serves and holds; tests set these directly.
  std::set<std::string> served;         // "group/version/kind"
  std::map<std::string, json> objects;  // by key(), as the server has them
  // By key(): a dry run or apply of an update fails so (a new object is let
  // through, as after a recreate).
  std::map<std::string, kube::ApiError> refuse_apply;
  std::vector<std::string> requests_log;  // "GET Kind/ns/name", "APPLY ...", "DRY-RUN ..."
  int kind_refreshes = 0;
  std::function<void()> on_refresh;           // what a refresh of discovery finds new
  bool establish = true;                      // whether applied CRDs are established at once
  std::function<void(const json&)> on_apply;  // after each apply, with the object applied
  std::set<std::string> stuck;  // by key(): deleted, they stay, terminating (a finalizer)

  static std::string key(const ssa::ObjectKey& k) { return kube::display_name(k); }

  void put(json object) {
    stamp(object, 1);
    std::string name = key(kube::object_key(object));
    objects[name] = std::move(object);
  }

  std::optional<json> get(const ssa::ObjectKey& k) override {
    log("GET", k);
    if (!has_kind(k)) return std::nullopt;
    auto found = objects.find(key(k));
    if (found == objects.end()) return std::nullopt;
    return found->second;
  }
  std::vector<std::vector<json>> list_all(const std::vector<ListQuery>& queries) override {
    std::vector<std::vector<json>> lists;
    for (const ListQuery& query : queries) {
      ssa::ObjectKey named = query.kind;
      named.name = query.name;
      log("LIST", named);
      std::vector<json>& out = lists.emplace_back();
      if (!has_kind(query.kind)) continue;
      for (const auto& [name, object] : objects) {
        ssa::ObjectKey k = kube::object_key(object);
        if (k.group != query.kind.group || k.kind != query.kind.kind) continue;
        if (!query.kind.ns.empty() && k.ns != query.kind.ns) continue;
        if (!query.name.empty() && k.name != query.name) continue;
        ssa::Labels labels = object["metadata"].value("labels", ssa::Labels{});
        if (std::all_of(query.selector.begin(), query.selector.end(), [&](const auto& label) {
              auto found = labels.find(label.first);
              return found != labels.end() && found->second == label.second;
            })) {
          out.push_back(object);
        }
      }
    }
    return lists;
  }
  std::vector<ssa::WriteResult> apply_all(const std::vector<json>& batch, bool dry_run) override {
    std::vector<ssa::WriteResult> results(batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      try {
        results[i].object = dry_run ? apply_dry_run(batch[i]) : apply(batch[i]);
      } catch (const Error&) {
        results[i].error = std::current_exception();
      }
    }
    return results;
  }
  json apply(const json& object) override {
    if (dry_run_) return apply_dry_run(object);
    log("APPLY", kube::object_key(object));
    json merged = merge(object);
    objects[key(kube::object_key(object))] = merged;
    if (on_apply) on_apply(merged);
    return merged;
  }
  json apply_dry_run(const json& object) override {
    log("DRY-RUN", kube::object_key(object));
    return merge(object);
  }
  json apply_status(const ssa::ObjectKey& k, const json& status) override {
    log("STATUS", k);
    if (dry_run_) return json();
    json& object = objects.at(key(k));
    object["status"] = status;
    return object;
  }
  std::optional<json> create(const json& object) override {
    log("CREATE", kube::object_key(object));
    std::string name = key(kube::object_key(object));
    if (objects.contains(name)) return std::nullopt;
    if (dry_run_) return object;
    json created = object;
    stamp(created, 1);
    objects[name] = created;
    return created;
  }
  std::optional<json> replace(const json& object) override {
    log("REPLACE", kube::object_key(object));
    std::string name = key(kube::object_key(object));
    auto found = objects.find(name);
    if (found == objects.end() || version(found->second) != version(object)) return std::nullopt;
    json replaced = object;
    stamp(replaced, version(object) + 1);
    if (!dry_run_) found->second = replaced;
    return replaced;
  }
  json merge_patch_status(const ssa::ObjectKey& k, const json& status) override {
    log("PATCH-STATUS", k);
    json& object = objects.at(key(k));
    if (!dry_run_) object["status"].merge_patch(status);
    return object;
  }
  json json_patch(const ssa::ObjectKey& k, const json& patch) override {
    log("PATCH", k);
    auto found = objects.find(key(k));
    if (found == objects.end()) throw kube::ApiError(key(k) + " not found", 404, "NotFound");
    json& object = found->second;
    if (before_patch) before_patch(object);
    json patched = patched_by(object, patch);
    if (dry_run_) return patched;
    stamp(patched, version(object) + 1);
    object = patched;
    if (lost_patch_responses > 0) {
      // The answer lost, the request sent again: the server sees it twice.
      --lost_patch_responses;
      return json_patch(k, patch);
    }
    return patched;
  }
  // Before each JSON patch, with the object it applies to: another writer
  // moving it in between (a status write).
  std::function<void(json&)> before_patch;
  // How many JSON patches go through but lose their answer (sent again).
  int lost_patch_responses = 0;
  bool remove(const ssa::ObjectKey& k) override {
    log("DELETE", k);
    if (dry_run_) return objects.contains(key(k));
    if (auto held = objects.find(key(k)); held != objects.end() && stuck.contains(key(k))) {
      held->second["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
      return true;
    }
    return objects.erase(key(k)) > 0;
  }
  bool has_kind(const ssa::ObjectKey& k) override {
    return served.contains(k.group + "/" + k.version + "/" + k.kind);
  }
  void refresh_kinds() override {
    ++kind_refreshes;
    requests_log.push_back("REFRESH");
    if (on_refresh) on_refresh();
  }
  // Every kind of `served` in an accepted group (the fake serves one
  // version of each).
  std::vector<ssa::ObjectKey> served_kinds(
      const std::function<bool(std::string_view group)>& in_group) override {
    std::vector<ssa::ObjectKey> kinds;
    for (const std::string& served_kind : served) {
      std::size_t version_at = served_kind.find('/');
      std::size_t kind_at = served_kind.find('/', version_at + 1);
      ssa::ObjectKey kind{served_kind.substr(0, version_at),
                          served_kind.substr(version_at + 1, kind_at - version_at - 1),
                          served_kind.substr(kind_at + 1), "", ""};
      if (in_group(kind.group)) kinds.push_back(kind);
    }
    return kinds;
  }
  std::string kubernetes_version = "v1.31.0";  // the server's
  std::string server_version() override { return kubernetes_version; }
  std::string platform = "linux/amd64";  // the server's
  std::string server_platform() override { return platform; }
  bool dry_run() const override { return dry_run_; }
  const std::string& field_manager() const override { return manager_; }
  int requests() const override { return static_cast<int>(requests_log.size()); }

  // The requests of one verb, in order.
  std::vector<std::string> logged(const std::string& verb) const {
    std::vector<std::string> out;
    for (const std::string& line : requests_log) {
      if (line.starts_with(verb + " ")) out.push_back(line.substr(verb.size() + 1));
    }
    return out;
  }

 private:
  // A failed `test` refused as the API server refuses it.
  static json patched_by(const json& object, const json& patch) {
    try {
      return object.patch(patch);
    } catch (const json::exception& e) {
      throw kube::ApiError("the server rejected our request due to an error in our request", 422,
                           "Invalid", {{"UnexpectedServerResponse", e.what(), ""}});
    }
  }
  static std::int64_t version(const json& object) {
    std::string text = object.value("metadata", json::object()).value("resourceVersion", "0");
    return std::stoll(text);
  }
  // The fields server-side apply tracks of an object, every list atomic.
  static json fields_of(const json& value) {
    json fields = json::object();
    if (!value.is_object()) return fields;
    for (const auto& [key, item] : value.items()) fields["f:" + key] = fields_of(item);
    return fields;
  }
  // The managed fields of an object this manager applied.
  json ours(const json& object) const {
    json tracked = object;
    for (const char* field : {"apiVersion", "kind", "status"}) tracked.erase(field);
    for (const char* field : {"name", "namespace", "resourceVersion", "managedFields"}) {
      tracked["metadata"].erase(field);
    }
    if (tracked["metadata"].empty()) tracked.erase("metadata");
    return json::array({{{"manager", manager_},
                         {"operation", "Apply"},
                         {"apiVersion", object.value("apiVersion", "")},
                         {"fieldsV1", fields_of(tracked)}}});
  }
  void stamp(json& object, std::int64_t resource_version) const {
    if (!object["metadata"].contains("managedFields")) {
      object["metadata"]["managedFields"] = ours(object);
    }
    object["metadata"]["resourceVersion"] = std::to_string(resource_version);
  }
  void log(const char* verb, const ssa::ObjectKey& k) {
    requests_log.push_back(std::string(verb) + " " + key(k));
  }
  // The applied object as the server would have it: unchanged (same
  // version and managers) when its content is what is there already and
  // this manager alone owns it.
  json merge(const json& object) {
    std::string name = key(kube::object_key(object));
    auto found = objects.find(name);
    if (auto refused = refuse_apply.find(name);
        refused != refuse_apply.end() && found != objects.end()) {
      throw refused->second;
    }
    // The main resource's status is the server's: kept as it is.
    json merged = object;
    merged.erase("status");
    if (found != objects.end() && found->second.contains("status")) {
      merged["status"] = found->second["status"];
    }
    if (kube::object_key(object).kind == "CustomResourceDefinition" && establish) {
      merged["status"]["conditions"] = json::array({{{"type", "Established"}, {"status", "True"}}});
    }
    if (found == objects.end()) {
      stamp(merged, 1);
      return merged;
    }
    json content = found->second;
    content["metadata"].erase("resourceVersion");
    json managers = content["metadata"]["managedFields"];
    content["metadata"].erase("managedFields");
    if (content == merged && managers == ours(object)) return found->second;
    merged["metadata"]["managedFields"] = ours(object);
    merged["metadata"]["resourceVersion"] = std::to_string(version(found->second) + 1);
    return merged;
  }

  bool dry_run_;
  std::string manager_ = "flux-operator";
};

}  // namespace fluxop::testing
