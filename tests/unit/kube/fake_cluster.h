// A cluster in memory for unit tests of the engine, the policies on top, the
// daemon's watch and leader election: objects by key, server-side apply
// reduced to "the applied object plus the server's fields", every request
// recorded in order, and answers scripted where a test needs the server to
// refuse. Watches hear of every write at once; another thread's connection
// (for_thread) takes `mutex()` around each request, which a test that reads or
// writes the objects meanwhile takes too.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/kube/cluster.h"

namespace fluxop::testing {

using nlohmann::json;

class FakeCluster : public kube::Cluster {
 public:
  explicit FakeCluster(bool dry_run = false) : dry_run_(dry_run) {
    for (const char* kind :
         {"/v1/Namespace", "/v1/ConfigMap", "/v1/Service", "/v1/ServiceAccount", "/v1/Pod",
          "apps/v1/ReplicaSet", "apps/v1/Deployment",
          "apiextensions.k8s.io/v1/CustomResourceDefinition", "coordination.k8s.io/v1/Lease"}) {
      served.insert(kind);
    }
  }

  // What the fake serves and holds; tests set these directly.
  std::set<std::string> served;         // "group/version/kind"
  std::map<std::string, json> objects;  // by key(), as the server has them
  // By key(): a dry run or apply of an update fails so (a new object is let
  // through, as after a recreate).
  std::map<std::string, kube::ApiError> refuse_apply;
  // By "group/version/kind": a list of that kind fails so (forbidden).
  std::map<std::string, kube::ApiError> refuse_list;
  std::vector<std::string> requests_log;  // "GET Kind/ns/name", "APPLY ...", "DRY-RUN ..."
  int kind_refreshes = 0;
  std::function<void()> on_refresh;           // what a refresh of discovery finds new
  bool establish = true;                      // whether applied CRDs are established at once
  std::function<void(const json&)> on_apply;  // after each apply, with the object applied
  std::function<void(const kube::ListQuery&)> on_list;  // before each list is answered
  std::set<std::string> denied;                         // access reviews answered no, by access()
  std::vector<kube::AccessQuery> reviewed;
  std::set<std::string> stuck;  // by key(): deleted, they stay, terminating (a finalizer)

  static std::string key(const kube::ObjectKey& k) { return kube::display_name(k); }

  // Whether the object's fields match a field selector of `path=value`
  // terms joined by commas ("involvedObject.uid=u1,type=Warning").
  static bool selects(const std::string& fields, const json& object) {
    for (std::size_t start = 0; start < fields.size();) {
      std::size_t end = std::min(fields.find(',', start), fields.size());
      std::string term = fields.substr(start, end - start);
      std::size_t equals = term.find('=');
      std::string path = "/" + term.substr(0, equals);
      std::replace(path.begin(), path.end(), '.', '/');
      json::json_pointer pointer(path);
      if (!object.contains(pointer) || object.at(pointer) != term.substr(equals + 1)) return false;
      start = end + 1;
    }
    return true;
  }

  void put(json object) {
    stamp(object, 1);
    kube::ObjectKey k = kube::object_key(object);
    objects[key(k)] = std::move(object);
    changed(k);
  }

  std::optional<json> get(const kube::ObjectKey& k) override {
    log("GET", k);
    if (!has_kind(k)) return std::nullopt;
    auto found = objects.find(key(k));
    if (found == objects.end()) return std::nullopt;
    return found->second;
  }
  std::vector<std::vector<json>> list_all(const std::vector<kube::ListQuery>& queries) override {
    std::vector<std::vector<json>> lists;
    for (const kube::ListQuery& query : queries) {
      kube::ObjectKey named = query.kind;
      named.name = query.name;
      log("LIST", named);
      if (on_list) on_list(query);
      const kube::ObjectKey& kind = query.kind;
      if (auto refused = refuse_list.find(kind.group + "/" + kind.version + "/" + kind.kind);
          refused != refuse_list.end())
        throw refused->second;
      std::vector<json>& out = lists.emplace_back();
      if (!has_kind(query.kind)) continue;
      for (const auto& [name, object] : objects) {
        kube::ObjectKey k = kube::object_key(object);
        if (k.group != query.kind.group || k.kind != query.kind.kind) continue;
        if (!query.kind.ns.empty() && k.ns != query.kind.ns) continue;
        if (!query.name.empty() && k.name != query.name) continue;
        if (!selects(query.fields, object)) continue;
        kube::Labels labels = object["metadata"].value("labels", kube::Labels{});
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
  void list_each(const std::vector<kube::ListQuery>& queries,
                 const kube::ListVisitor& each) override {
    std::vector<std::vector<json>> lists = list_all(queries);
    for (std::size_t i = 0; i < lists.size(); ++i) {
      for (json& object : lists[i]) each(i, std::move(object));
    }
  }
  std::vector<kube::WriteResult> apply_all(const std::vector<json>& batch, bool dry_run) override {
    std::vector<kube::WriteResult> results(batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      try {
        results[i].object = dry_run || dry_run_ ? dry_run_one(batch[i]) : apply_one(batch[i]);
      } catch (const Error&) {
        results[i].error = std::current_exception();
      }
    }
    return results;
  }
  json apply_status(const kube::ObjectKey& k, const json& status,
                    const std::string& resource_version = {}) override {
    log("STATUS", k);
    if (dry_run_) return json();
    json& object = objects.at(key(k));
    if (before_status) before_status(object);
    if (!resource_version.empty() &&
        object["metadata"].value("resourceVersion", "") != resource_version)
      throw kube::ApiError(key(k) + ": the object has been modified", 409, "Conflict");
    object["status"] = status;
    stamp(object, version(object) + 1);
    changed(k);
    return object;
  }
  // Before each status write, with the object it writes to: another writer
  // moving it in between.
  std::function<void(json&)> before_status;
  // The answer to creating a kind that is only asked, never stored (a
  // TokenReview, a SubjectAccessReview); none: every object is stored.
  std::function<json(const json&)> answer_review;
  std::optional<json> create(const json& object) override {
    log("CREATE", kube::object_key(object));
    if (answer_review) return answer_review(object);
    std::string name = key(kube::object_key(object));
    if (objects.contains(name)) return std::nullopt;
    // As the API server: nothing new in a namespace being deleted.
    std::string ns = kube::object_key(object).ns;
    if (auto found = objects.find("Namespace/" + ns);
        !ns.empty() && found != objects.end() &&
        found->second["metadata"].contains("deletionTimestamp"))
      throw kube::ApiError(
          "unable to create new content in namespace " + ns + " because it is being terminated",
          403, "Forbidden");
    if (dry_run_) return object;
    json created = object;
    stamp(created, 1);
    objects[name] = created;
    changed(kube::object_key(object));
    return created;
  }
  std::optional<json> replace(const json& object) override {
    log("REPLACE", kube::object_key(object));
    std::string name = key(kube::object_key(object));
    auto found = objects.find(name);
    if (found != objects.end() && before_replace) before_replace(found->second);
    if (found == objects.end() || version(found->second) != version(object)) return std::nullopt;
    json replaced = object;
    stamp(replaced, version(object) + 1);
    if (!dry_run_) found->second = replaced;
    changed(kube::object_key(object));
    return replaced;
  }
  std::vector<kube::WriteResult> patch_all(const std::vector<kube::ObjectPatch>& patches) override {
    ++patch_batches;
    std::vector<kube::WriteResult> results;
    for (const kube::ObjectPatch& patch : patches) {
      kube::WriteResult& result = results.emplace_back();
      try {
        if (auto refused = refuse_patch.find(key(patch.key)); refused != refuse_patch.end())
          throw refused->second;
        result.object = patch.type == kube::ObjectPatch::Type::Json
                            ? json_patch(patch.key, patch.patch)
                            : merge_patch(patch.key, patch.patch);
      } catch (const kube::ApiError&) {
        result.error = std::current_exception();
      }
    }
    return results;
  }
  // By key(): a patch of patch_all fails so.
  std::map<std::string, kube::ApiError> refuse_patch;
  int patch_batches = 0;  // calls of patch_all
  json merge_patch_status(const kube::ObjectKey& k, const json& status) override {
    log("PATCH-STATUS", k);
    json& object = objects.at(key(k));
    if (!dry_run_) object["status"].merge_patch(status);
    changed(k);
    return object;
  }
  // A JSON merge patch: the object unchanged (no new resourceVersion) when
  // it changes nothing, as the API server leaves it.
  json merge_patch(const kube::ObjectKey& k, const json& patch) {
    log("PATCH", k);
    auto found = objects.find(key(k));
    if (found == objects.end()) throw kube::ApiError(key(k) + " not found", 404, "NotFound");
    json patched = found->second;
    patched.merge_patch(patch);
    if (dry_run_ || patched == found->second) return patched;
    stamp(patched, version(found->second) + 1);
    found->second = patched;
    changed(k);
    return patched;
  }
  json json_patch(const kube::ObjectKey& k, const json& patch) override {
    log("PATCH", k);
    auto found = objects.find(key(k));
    if (found == objects.end()) throw kube::ApiError(key(k) + " not found", 404, "NotFound");
    json& object = found->second;
    if (before_patch) before_patch(object);
    json patched = patched_by(object, patch);
    if (dry_run_) return patched;
    stamp(patched, version(object) + 1);
    object = patched;
    changed(k);
    if (lost_patch_responses > 0) {
      // The answer lost, the request sent again: the server sees it twice.
      --lost_patch_responses;
      return json_patch(k, patch);
    }
    return patched;
  }
  // Before each replace, with the object it replaces: another writer
  // moving it in between.
  std::function<void(json&)> before_replace;
  // Before each JSON patch, with the object it applies to: another writer
  // moving it in between (a status write).
  std::function<void(json&)> before_patch;
  // How many JSON patches go through but lose their answer (sent again).
  int lost_patch_responses = 0;
  bool remove(const kube::ObjectKey& k) override {
    log("DELETE", k);
    if (dry_run_) return objects.contains(key(k));
    if (auto held = objects.find(key(k)); held != objects.end() && stuck.contains(key(k))) {
      held->second["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
      changed(k);
      return true;
    }
    bool removed = objects.erase(key(k)) > 0;
    changed(k);
    return removed;
  }
  bool has_kind(const kube::ObjectKey& k) override {
    return served.contains(k.group + "/" + k.version + "/" + k.kind);
  }
  void refresh_kinds() override {
    ++kind_refreshes;
    requests_log.push_back("REFRESH");
    if (on_refresh) on_refresh();
  }
  // Every kind of `served` in an accepted group (the fake serves one
  // version of each).
  std::vector<kube::ObjectKey> served_kinds(
      const std::function<bool(std::string_view group)>& in_group) override {
    std::vector<kube::ObjectKey> kinds;
    for (const std::string& served_kind : served) {
      std::size_t version_at = served_kind.find('/');
      std::size_t kind_at = served_kind.find('/', version_at + 1);
      kube::ObjectKey kind{served_kind.substr(0, version_at),
                           served_kind.substr(version_at + 1, kind_at - version_at - 1),
                           served_kind.substr(kind_at + 1), "", ""};
      if (in_group(kind.group)) kinds.push_back(kind);
    }
    return kinds;
  }
  std::string kubernetes_version = "v1.31.0";  // the server's
  std::string platform = "linux/amd64";        // the server's
  kube::ServerVersion server_version() override { return {kubernetes_version, platform}; }
  // Allowed unless `denied` holds access(query); logged "REVIEW <access>".
  std::vector<kube::AccessAnswer> review_access(
      const std::vector<kube::AccessQuery>& queries) override {
    std::vector<kube::AccessAnswer> answers;
    for (const kube::AccessQuery& query : queries) {
      requests_log.push_back("REVIEW " + access(query));
      reviewed.push_back(query);
      bool allowed = !denied.contains(access(query));
      answers.push_back({allowed, allowed ? "" : "denied by the test"});
    }
    return answers;
  }
  // "create Deployment flux-system", "patch FluxInstance/status flux-system",
  // "create Namespace " (cluster-scoped).
  static std::string access(const kube::AccessQuery& query) {
    return query.verb + " " + query.kind.kind +
           (query.subresource.empty() ? "" : "/" + query.subresource) + " " + query.kind.ns;
  }

  // The object as last written, from the thread that wrote it.
  class Watch : public kube::ObjectView {
   public:
    Watch(FakeCluster& cluster, kube::ObjectKey key, std::function<void()> on_change,
          std::function<void(const std::string&)> on_error)
        : cluster_(cluster),
          key_(std::move(key)),
          on_change_(std::move(on_change)),
          on_error_(std::move(on_error)) {
      std::lock_guard lock(cluster_.mutex());
      cluster_.watches_.push_back(this);
    }
    ~Watch() override {
      std::lock_guard lock(cluster_.mutex());
      std::erase(cluster_.watches_, this);
    }
    std::optional<json> object() const override {
      std::lock_guard lock(cluster_.mutex());
      auto found = cluster_.objects.find(key(key_));
      if (found == cluster_.objects.end()) return std::nullopt;
      return found->second;
    }
    bool synced() const override {
      std::lock_guard lock(cluster_.mutex());
      return synced_;
    }

   private:
    friend class FakeCluster;
    FakeCluster& cluster_;
    kube::ObjectKey key_;
    std::function<void()> on_change_;
    std::function<void(const std::string&)> on_error_;
    bool synced_ = false;
  };
  // Whether a new watch lists its object at once; when false, it stays
  // unsynced until sync_watches().
  bool watches_list = true;
  std::unique_ptr<kube::ObjectView> watch(
      const kube::ObjectKey& k, std::function<void()> on_change,
      std::function<void(const std::string&)> on_error) override {
    log("WATCH", k);
    auto watch = std::make_unique<Watch>(*this, k, std::move(on_change), std::move(on_error));
    if (watches_list) notify(*watch);
    return watch;
  }
  // Every watch lists its object.
  void sync_watches() {
    std::lock_guard lock(mutex());
    for (Watch* watch : watches_) notify(*watch);
  }
  // Every watch fails so (and would retry).
  void fail_watches(const std::string& message) {
    std::lock_guard lock(mutex());
    for (Watch* watch : watches_) {
      if (watch->on_error_) watch->on_error_(message);
    }
  }

  // Taken around each request of another thread's connection. (Held by
  // pointer, so that a test can return a fake it filled.)
  std::recursive_mutex& mutex() { return *mutex_; }
  // While set, each request of another thread's connection fails so (an
  // API server that is down).
  std::optional<kube::ApiError> outage;
  std::unique_ptr<kube::Cluster> for_thread(std::chrono::milliseconds) override {
    return std::make_unique<Locked>(*this);
  }
  bool dry_run() const override { return dry_run_; }
  const std::string& field_manager() const override { return manager_; }
  void set_field_manager(std::string manager) { manager_ = std::move(manager); }
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
  json apply_one(const json& object) {
    log("APPLY", kube::object_key(object));
    json merged = merge(object);
    objects[key(kube::object_key(object))] = merged;
    changed(kube::object_key(object));
    if (on_apply) on_apply(merged);
    return merged;
  }
  json dry_run_one(const json& object) {
    log("DRY-RUN", kube::object_key(object));
    return merge(object);
  }
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
  // This cluster, each request taken under its mutex, for another thread.
  class Locked : public kube::Cluster {
    template <typename Request>
    auto locked(Request request) {
      std::lock_guard lock(cluster_.mutex());
      if (cluster_.outage) throw *cluster_.outage;
      return request();
    }

   public:
    explicit Locked(FakeCluster& cluster) : cluster_(cluster) {}
    std::optional<json> get(const kube::ObjectKey& k) override {
      return locked([&] { return cluster_.get(k); });
    }
    std::vector<std::vector<json>> list_all(const std::vector<kube::ListQuery>& queries) override {
      return locked([&] { return cluster_.list_all(queries); });
    }
    void list_each(const std::vector<kube::ListQuery>& queries,
                   const kube::ListVisitor& each) override {
      locked([&] { cluster_.list_each(queries, each); });
    }
    std::vector<kube::WriteResult> apply_all(const std::vector<json>& batch,
                                             bool dry_run) override {
      return locked([&] { return cluster_.apply_all(batch, dry_run); });
    }
    json apply_status(const kube::ObjectKey& k, const json& status,
                      const std::string& resource_version) override {
      return locked([&] { return cluster_.apply_status(k, status, resource_version); });
    }
    std::optional<json> create(const json& object) override {
      return locked([&] { return cluster_.create(object); });
    }
    std::optional<json> replace(const json& object) override {
      return locked([&] { return cluster_.replace(object); });
    }
    std::vector<kube::WriteResult> patch_all(
        const std::vector<kube::ObjectPatch>& patches) override {
      return locked([&] { return cluster_.patch_all(patches); });
    }
    json merge_patch_status(const kube::ObjectKey& k, const json& status) override {
      return locked([&] { return cluster_.merge_patch_status(k, status); });
    }
    json json_patch(const kube::ObjectKey& k, const json& patch) override {
      return locked([&] { return cluster_.json_patch(k, patch); });
    }
    bool remove(const kube::ObjectKey& k) override {
      return locked([&] { return cluster_.remove(k); });
    }
    bool has_kind(const kube::ObjectKey& k) override {
      return locked([&] { return cluster_.has_kind(k); });
    }
    void refresh_kinds() override {
      locked([&] { return cluster_.refresh_kinds(); });
    }
    std::vector<kube::ObjectKey> served_kinds(
        const std::function<bool(std::string_view group)>& in_group) override {
      return locked([&] { return cluster_.served_kinds(in_group); });
    }
    std::vector<kube::AccessAnswer> review_access(
        const std::vector<kube::AccessQuery>& queries) override {
      return locked([&] { return cluster_.review_access(queries); });
    }
    kube::ServerVersion server_version() override {
      return locked([&] { return cluster_.server_version(); });
    }
    std::unique_ptr<kube::ObjectView> watch(
        const kube::ObjectKey& k, std::function<void()> on_change,
        std::function<void(const std::string&)> on_error) override {
      return cluster_.watch(k, std::move(on_change), std::move(on_error));
    }
    std::unique_ptr<kube::Cluster> for_thread(std::chrono::milliseconds timeout) override {
      return cluster_.for_thread(timeout);
    }
    bool dry_run() const override { return cluster_.dry_run(); }
    const std::string& field_manager() const override { return cluster_.field_manager(); }
    int requests() const override { return cluster_.requests(); }

   private:
    FakeCluster& cluster_;
  };

  void log(const char* verb, const kube::ObjectKey& k) {
    requests_log.push_back(std::string(verb) + " " + key(k));
  }
  // Tells the watches of the object that it changed.
  void changed(const kube::ObjectKey& k) {
    if (dry_run_) return;
    for (Watch* watch : watches_) {
      if (watch->key_ == k) notify(*watch);
    }
  }
  void notify(Watch& watch) {
    watch.synced_ = true;
    if (watch.on_change_) watch.on_change_();
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
  std::vector<Watch*> watches_;
  std::unique_ptr<std::recursive_mutex> mutex_ = std::make_unique<std::recursive_mutex>();
};

}  // namespace fluxop::testing
