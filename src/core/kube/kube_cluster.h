// The cluster through the Kubernetes client and its REST mapper.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/kube/client.h"
#include "core/kube/cluster.h"

namespace fluxop::kube {

class KubeCluster : public Cluster {
 public:
  KubeCluster(KubeClient& client, std::string field_manager, bool dry_run);
  // One that owns its client.
  KubeCluster(std::unique_ptr<KubeClient> client, std::string field_manager, bool dry_run);

  std::optional<nlohmann::json> get(const ObjectKey& key) override;
  std::vector<std::vector<nlohmann::json>> list_all(const std::vector<ListQuery>& queries) override;
  void list_each(const std::vector<ListQuery>& queries, const ListVisitor& each) override;
  void list_streamed(const std::vector<ListQuery>& queries, const ListVisitor& each) override;
  std::vector<WriteResult> apply_all(const std::vector<nlohmann::json>& objects,
                                     bool dry_run) override;
  nlohmann::json apply_status(const ObjectKey& key, const nlohmann::json& status,
                              const std::string& resource_version) override;
  std::optional<nlohmann::json> create(const nlohmann::json& object) override;
  std::optional<nlohmann::json> replace(const nlohmann::json& object) override;
  std::vector<WriteResult> patch_all(const std::vector<ObjectPatch>& patches) override;
  nlohmann::json merge_patch_status(const ObjectKey& key, const nlohmann::json& status) override;
  nlohmann::json json_patch(const ObjectKey& key, const nlohmann::json& patch) override;
  bool remove(const ObjectKey& key) override;
  bool has_kind(const ObjectKey& key) override;
  void refresh_kinds() override;
  std::vector<ObjectKey> served_kinds(
      const std::function<bool(std::string_view group)>& in_group) override;
  ServerVersion server_version() override;
  std::vector<AccessAnswer> review_access(const std::vector<AccessQuery>& queries) override;
  std::unique_ptr<ObjectView> watch(const ObjectKey& key, std::function<void()> on_change,
                                    std::function<void(const std::string&)> on_error) override;
  std::unique_ptr<Cluster> for_thread(std::chrono::milliseconds request_timeout) override;

  bool dry_run() const override { return dry_run_; }
  const std::string& field_manager() const override { return field_manager_; }
  int requests() const override;

 private:
  WriteOptions writes() const;
  // The queries of kinds the server serves (a list of one it does not is
  // empty); `served` gets the index of each in `queries`.
  std::vector<ListQuery> served_queries(const std::vector<ListQuery>& queries,
                                        std::vector<std::size_t>& served);

  std::unique_ptr<KubeClient> owned_;
  KubeClient& client_;
  std::string field_manager_;
  bool dry_run_;
};

// How to reach a cluster, as kubectl's flags say it; the kubeconfig is read
// again at each connection (a projected token rotates).
struct ClusterSettings {
  std::string kubeconfig;  // empty: $KUBECONFIG, ~/.kube/config, in-cluster
  std::string context;     // empty: the current one
  bool insecure_skip_tls_verify = false;
  // --as and --as-group: they replace the kubeconfig user's as and as-groups.
  Impersonation impersonate;
  std::chrono::milliseconds request_timeout{30'000};
  std::string field_manager = "flux-operator";  // the in-cluster operator's
};

struct Connection {
  std::unique_ptr<KubeClient> client;
  std::unique_ptr<KubeCluster> cluster;
};

// `retry_until`: until when an outage of a server that has answered is
// retried (ClientOptions::retry_until); `cancelled` ends a request
// early (ClientOptions::cancelled).
Connection connect(const ClusterSettings& settings, bool dry_run,
                   std::optional<std::chrono::steady_clock::time_point> retry_until = {},
                   std::function<bool()> cancelled = {});

}  // namespace fluxop::kube
