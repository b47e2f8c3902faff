// What fluxopctl needs from a cluster, and all it asks of one: objects named
// by ObjectKey (read, listed, applied server-side by one field manager,
// created, replaced at a resourceVersion, patched, deleted), the kinds the
// server serves, one object watched, and a connection of its own for another
// thread. Secrets, Leases and Events are objects like any other. KubeCluster
// is the real one; unit tests use a fake that keeps the objects in memory.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/kube/object.h"

namespace fluxop::kube {

// One object kept as the server has it, from another thread (a watch): it
// says when the object changed, never polled.
class ObjectView {
 public:
  virtual ~ObjectView() = default;
  // The object as last seen; nullopt when it does not exist.
  virtual std::optional<nlohmann::json> object() const = 0;
  // Whether the object has been read once: object() tells what is there.
  virtual bool synced() const = 0;
};

// What the API server's /version says of it.
struct ServerVersion {
  std::string git_version;  // "v1.31.2"
  std::string platform;     // "linux/amd64"
};

// Whether the caller may do `verb` to objects of a kind (in kind.ns; for
// a namespaced kind without one, in every namespace): one
// SelfSubjectAccessReview, so the caller is whoever the kubeconfig says.
struct AccessQuery {
  ObjectKey kind;
  std::string verb;  // "create", "patch", "delete", ...
  std::string subresource;
  // The kind's resource ("gitrepositories") when the server does not serve
  // it yet (its CRD is still to be applied); the server's mapping otherwise.
  std::string resource;
};

struct AccessAnswer {
  bool allowed = false;
  std::string reason;  // the authorizer's, when it gave one
};

class Cluster {
 public:
  virtual ~Cluster() = default;

  // The live object; nullopt when it does not exist (or its kind is unknown).
  virtual std::optional<nlohmann::json> get(const ObjectKey& key) = 0;
  // The lists, asked for together; an empty one for a kind not served.
  virtual std::vector<std::vector<nlohmann::json>> list_all(
      const std::vector<ListQuery>& queries) = 0;
  // The same lists, each object handed to `each` as it arrives and dropped
  // after: what a list costs in memory is what `each` keeps of it.
  virtual void list_each(const std::vector<ListQuery>& queries, const ListVisitor& each) = 0;
  // The same, each list read whole and each object handed to `each` as it
  // is decoded, while the answers still arrive: `each` sends no request.
  // Its metadata.managedFields may be left out. The default is list_each.
  virtual void list_streamed(const std::vector<ListQuery>& queries, const ListVisitor& each) {
    list_each(queries, each);
  }
  std::vector<nlohmann::json> list(const ObjectKey& kind, const Labels& selector) {
    return std::move(list_all({{kind, selector, ""}}).front());
  }

  // Server-side applies with force, sent together (a dry run of each when
  // `dry_run`, whatever the cluster's mode); each result in the objects'
  // order.
  virtual std::vector<WriteResult> apply_all(const std::vector<nlohmann::json>& objects,
                                             bool dry_run) = 0;
  // One of them; the object as the server has it after.
  nlohmann::json apply(const nlohmann::json& object) { return applied(object, false); }
  // The same as a server dry run, whatever the cluster's mode: what the
  // server would make of the object, with nothing changed.
  nlohmann::json apply_dry_run(const nlohmann::json& object) { return applied(object, true); }
  // Server-side apply of `status` to the object's status subresource; the
  // object as the server has it after. With a `resource_version`, only
  // onto the object at that version: an ApiError Conflict when another
  // write moved it.
  virtual nlohmann::json apply_status(const ObjectKey& key, const nlohmann::json& status,
                                      const std::string& resource_version = {}) = 0;
  // Creates the object; nullopt when it already exists.
  virtual std::optional<nlohmann::json> create(const nlohmann::json& object) = 0;
  // Replaces the object at its metadata.resourceVersion; nullopt on a conflict.
  virtual std::optional<nlohmann::json> replace(const nlohmann::json& object) = 0;
  // Patches of many objects, sent together, several in flight; each answer
  // in their order: the object's metadata as the server has it after, or
  // the error (an ApiError: NotFound when it is gone, Conflict or Invalid
  // when a `test` failed).
  virtual std::vector<WriteResult> patch_all(const std::vector<ObjectPatch>& patches) = 0;
  // A JSON merge patch of the object's status (replaces lists whole).
  virtual nlohmann::json merge_patch_status(const ObjectKey& key, const nlohmann::json& status) = 0;
  // A JSON patch (RFC 6902).
  virtual nlohmann::json json_patch(const ObjectKey& key, const nlohmann::json& patch) = 0;
  // Deletes with background propagation; false when it was already gone.
  virtual bool remove(const ObjectKey& key) = 0;

  // Whether the API server serves the object's kind.
  virtual bool has_kind(const ObjectKey& key) = 0;
  // Forgets discovery, e.g. after CRDs were applied.
  virtual void refresh_kinds() = 0;
  // The kinds served in the groups `in_group` accepts, each once, in its
  // preferred version (ObjectKey without name or namespace).
  virtual std::vector<ObjectKey> served_kinds(
      const std::function<bool(std::string_view group)>& in_group) = 0;
  virtual ServerVersion server_version() = 0;
  // The access reviews, sent together; each answer in the queries' order.
  virtual std::vector<AccessAnswer> review_access(const std::vector<AccessQuery>& queries) = 0;

  // The object `key` names, watched on a thread of its own: `on_change` is
  // called from that thread after the first read and every change,
  // `on_error` with one line when reading it failed (it is retried).
  virtual std::unique_ptr<ObjectView> watch(const ObjectKey& key, std::function<void()> on_change,
                                            std::function<void(const std::string&)> on_error) = 0;
  // A connection of its own, for another thread: each request is tried once
  // (the caller retries) and bounded by `request_timeout`.
  virtual std::unique_ptr<Cluster> for_thread(std::chrono::milliseconds request_timeout) = 0;

  // Every write is a server dry run (`apply --dry-run=server`, diff).
  virtual bool dry_run() const = 0;
  // The field manager of every write.
  virtual const std::string& field_manager() const = 0;
  virtual int requests() const = 0;

 private:
  nlohmann::json applied(const nlohmann::json& object, bool dry_run) {
    WriteResult result = std::move(apply_all({object}, dry_run).front());
    if (result.error) std::rethrow_exception(result.error);
    return std::move(result.object);
  }
};

}  // namespace fluxop::kube
