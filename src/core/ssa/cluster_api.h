// What the server-side-apply engine and the policies on top of it need from
// a cluster: objects named by kube::ObjectKey, read, applied server-side by
// one field manager, patched and deleted. KubeCluster is the real one; unit
// tests drive the engine on a fake that records requests and answers as
// scripted.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/kube/client.h"

namespace fluxop::ssa {

using kube::ObjectKey;
using kube::WriteResult;
using Labels = std::map<std::string, std::string>;

class ClusterApi {
 public:
  virtual ~ClusterApi() = default;

  // The live object; nullopt when it does not exist (or its kind is unknown).
  virtual std::optional<nlohmann::json> get(const ObjectKey& key) = 0;
  // Which objects of a kind (group, version, kind of `kind`) a list asks
  // for: those in kind.ns (every namespace when empty) that carry every
  // label of `selector`, and only the one so named when `name` is set.
  struct ListQuery {
    ObjectKey kind;
    Labels selector;
    std::string name;
  };
  // The lists, asked for together; an empty one for a kind not served.
  virtual std::vector<std::vector<nlohmann::json>> list_all(
      const std::vector<ListQuery>& queries) = 0;
  std::vector<nlohmann::json> list(const ObjectKey& kind, const Labels& selector) {
    return std::move(list_all({{kind, selector, ""}}).front());
  }
  // Server-side apply with force; the object as the server has it after.
  virtual nlohmann::json apply(const nlohmann::json& object) = 0;
  // Server-side applies sent together (a dry run of each when `dry_run`,
  // whatever the cluster's mode); each result in the objects' order.
  virtual std::vector<WriteResult> apply_all(const std::vector<nlohmann::json>& objects,
                                             bool dry_run) = 0;
  // The same as a server dry run, whatever the cluster's mode: what the
  // server would make of the object, with nothing changed.
  virtual nlohmann::json apply_dry_run(const nlohmann::json& object) = 0;
  // Server-side apply of `status` to the object's status subresource.
  virtual nlohmann::json apply_status(const ObjectKey& key, const nlohmann::json& status) = 0;
  // Creates the object; nullopt when it already exists.
  virtual std::optional<nlohmann::json> create(const nlohmann::json& object) = 0;
  // Replaces the object at its metadata.resourceVersion; nullopt on a conflict.
  virtual std::optional<nlohmann::json> replace(const nlohmann::json& object) = 0;
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
  // The API server's version, as /version's gitVersion says it ("v1.31.2").
  virtual std::string server_version() = 0;
  // Its os/arch, as /version's platform says it ("linux/amd64").
  virtual std::string server_platform() = 0;

  // Every write is a server dry run (`apply --dry-run=server`, diff).
  virtual bool dry_run() const = 0;
  // The field manager of every write.
  virtual const std::string& field_manager() const = 0;
  virtual int requests() const = 0;
};

}  // namespace fluxop::ssa
