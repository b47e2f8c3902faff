// The cluster as reconcile sees it: objects named by ObjectRef, read, applied
// (server-side, by a field manager), patched and deleted through the
// Kubernetes client and its REST mapper.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/kube/client.h"
#include "core/reconcile/inventory.h"

namespace fluxop::reconcile {

class Cluster {
 public:
  Cluster(kube::KubeClient& client, std::string field_manager, bool dry_run);

  // The live object; nullopt when it does not exist (or its kind is unknown).
  std::optional<nlohmann::json> get(const ObjectRef& ref);
  // The objects of a kind (group, version, kind of `kind`), in every namespace.
  std::vector<nlohmann::json> list(const ObjectRef& kind);
  // Server-side apply with force; the object as the server has it after.
  nlohmann::json apply(const nlohmann::json& object);
  // Server-side apply of `status` to the object's status subresource.
  nlohmann::json apply_status(const ObjectRef& ref, const nlohmann::json& status);
  // Creates the object; nullopt when it already exists.
  std::optional<nlohmann::json> create(const nlohmann::json& object);
  // Replaces the object at its metadata.resourceVersion; nullopt on a conflict.
  std::optional<nlohmann::json> replace(const nlohmann::json& object);
  // A JSON merge patch of the object's status (replaces lists whole).
  nlohmann::json merge_patch_status(const ObjectRef& ref, const nlohmann::json& status);
  // A JSON patch (RFC 6902).
  nlohmann::json json_patch(const ObjectRef& ref, const nlohmann::json& patch);
  // Deletes with background propagation; false when it was already gone.
  bool remove(const ObjectRef& ref);
  // Whether the API server serves the object's kind.
  bool has_kind(const ObjectRef& ref);
  // Forgets discovery, e.g. after CRDs were applied.
  void refresh_kinds();

  bool dry_run() const { return dry_run_; }
  const std::string& field_manager() const { return field_manager_; }
  int requests() const;

 private:
  kube::WriteOptions writes() const;

  kube::KubeClient& client_;
  std::string field_manager_;
  bool dry_run_;
};

}  // namespace fluxop::reconcile
