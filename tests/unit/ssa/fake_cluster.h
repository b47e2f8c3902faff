// A cluster in memory for unit tests of the engine and the policies on top:
// objects by key, server-side apply reduced to "the applied object plus the
// server's fields", every request recorded in order, and answers scripted
// where a test needs the server to refuse.
#pragma once

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
  std::vector<json> list(const ssa::ObjectKey& kind) override {
    log("LIST", kind);
    std::vector<json> out;
    for (const auto& [name, object] : objects) {
      ssa::ObjectKey k = kube::object_key(object);
      if (k.group == kind.group && k.kind == kind.kind) out.push_back(object);
    }
    return out;
  }
  json apply(const json& object) override {
    if (dry_run_) return apply_dry_run(object);
    log("APPLY", kube::object_key(object));
    json merged = merge(object);
    objects[key(kube::object_key(object))] = merged;
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
    json& object = objects.at(key(k));
    json patched = object.patch(patch);  // throws on a failed test, as the server refuses
    if (!dry_run_) object = patched;
    return patched;
  }
  bool remove(const ssa::ObjectKey& k) override {
    log("DELETE", k);
    if (dry_run_) return objects.contains(key(k));
    return objects.erase(key(k)) > 0;
  }
  bool has_kind(const ssa::ObjectKey& k) override {
    return served.contains(k.group + "/" + k.version + "/" + k.kind);
  }
  void refresh_kinds() override {
    ++kind_refreshes;
    requests_log.push_back("REFRESH");
  }
  bool dry_run() const override { return dry_run_; }
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
  static std::int64_t version(const json& object) {
    std::string text = object.value("metadata", json::object()).value("resourceVersion", "0");
    return std::stoll(text);
  }
  static void stamp(json& object, std::int64_t resource_version) {
    object["metadata"]["resourceVersion"] = std::to_string(resource_version);
    if (!object["metadata"].contains("managedFields")) {
      object["metadata"]["managedFields"] = json::array({{{"manager", "flux-operator"}}});
    }
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
    json merged = object;
    if (kube::object_key(object).kind == "CustomResourceDefinition") {
      merged["status"]["conditions"] = json::array({{{"type", "Established"}, {"status", "True"}}});
    }
    if (found == objects.end()) {
      stamp(merged, 1);
      return merged;
    }
    json ours = json::array({{{"manager", "flux-operator"}}});
    json content = found->second;
    content["metadata"].erase("resourceVersion");
    json managers = content["metadata"]["managedFields"];
    content["metadata"].erase("managedFields");
    if (content == merged && managers == ours) return found->second;
    merged["metadata"]["resourceVersion"] = std::to_string(version(found->second) + 1);
    merged["metadata"]["managedFields"] = ours;
    return merged;
  }

  bool dry_run_;
};

}  // namespace fluxop::testing
