// The cluster through the Kubernetes client and its REST mapper.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/kube/client.h"
#include "core/ssa/cluster_api.h"

namespace fluxop::ssa {

class KubeCluster : public ClusterApi {
 public:
  KubeCluster(kube::KubeClient& client, std::string field_manager, bool dry_run);

  std::optional<nlohmann::json> get(const ObjectKey& key) override;
  std::vector<std::vector<nlohmann::json>> list_all(const std::vector<ListQuery>& queries) override;
  nlohmann::json apply(const nlohmann::json& object) override;
  std::vector<WriteResult> apply_all(const std::vector<nlohmann::json>& objects,
                                     bool dry_run) override;
  nlohmann::json apply_dry_run(const nlohmann::json& object) override;
  nlohmann::json apply_status(const ObjectKey& key, const nlohmann::json& status) override;
  std::optional<nlohmann::json> create(const nlohmann::json& object) override;
  std::optional<nlohmann::json> replace(const nlohmann::json& object) override;
  nlohmann::json merge_patch_status(const ObjectKey& key, const nlohmann::json& status) override;
  nlohmann::json json_patch(const ObjectKey& key, const nlohmann::json& patch) override;
  bool remove(const ObjectKey& key) override;
  bool has_kind(const ObjectKey& key) override;
  void refresh_kinds() override;
  std::vector<ObjectKey> served_kinds(
      const std::function<bool(std::string_view group)>& in_group) override;
  std::string server_version() override;
  std::string server_platform() override;

  bool dry_run() const override { return dry_run_; }
  const std::string& field_manager() const override { return field_manager_; }
  int requests() const override;

 private:
  kube::WriteOptions writes() const;

  kube::KubeClient& client_;
  std::string field_manager_;
  bool dry_run_;
};

}  // namespace fluxop::ssa
