// Leader election on a cluster in memory: each election talks to it through
// a connection of its own, on its own thread, as it talks to an API server.
#include "core/daemon/leader.h"

#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "../eventually.h"
#include "../kube/fake_cluster.h"

using fluxop::daemon::LeaderElection;
using fluxop::daemon::LeaderOptions;
using fluxop::testing::eventually;
using fluxop::testing::FakeCluster;
using nlohmann::json;

namespace {

// The Lease as the cluster has it now, read while no election writes.
std::optional<json> lease(FakeCluster& cluster) {
  std::lock_guard lock(cluster.mutex());
  auto found = cluster.objects.find("Lease/flux-system/flux-operator");
  if (found == cluster.objects.end()) return std::nullopt;
  return found->second;
}

std::string holder(FakeCluster& cluster) {
  std::optional<json> current = lease(cluster);
  return current ? (*current)["spec"].value("holderIdentity", "") : "";
}

LeaderOptions quick(const std::string& identity) {
  LeaderOptions options;
  options.ns = "flux-system";
  options.identity = identity;
  // Long enough that a loaded machine's pauses never pass for a dead holder.
  options.lease_duration = std::chrono::milliseconds(5'000);
  options.renew_deadline = std::chrono::milliseconds(800);
  options.retry_period = std::chrono::milliseconds(100);
  return options;
}

}  // namespace

TEST_CASE("leader: one replica leads, the other waits, a release hands over at once") {
  FakeCluster cluster;
  std::atomic<int> changes{0};
  auto first = std::make_unique<LeaderElection>(
      cluster, quick("a"), [&] { ++changes; }, [](const std::string&) {});
  REQUIRE(eventually([&] { return first->leading(); }));
  json created = *lease(cluster);
  CHECK(created["metadata"]["name"] == "flux-operator");
  CHECK(created["spec"]["holderIdentity"] == "a");
  CHECK(created["spec"]["leaseDurationSeconds"] == 5);
  CHECK(created["spec"]["leaseTransitions"] == 0);
  CHECK(std::string(created["spec"]["renewTime"]).size() == 27);  // ...T18:20:00.123456Z
  CHECK(created["spec"]["acquireTime"] == created["spec"]["renewTime"]);

  LeaderElection second(
      cluster, quick("b"), [] {}, [](const std::string&) {});
  // The first keeps renewing: the second never leads meanwhile.
  std::string renewed = created["spec"]["renewTime"];
  REQUIRE(eventually([&] { return (*lease(cluster))["spec"]["renewTime"] != renewed; }));
  CHECK_FALSE(second.leading());
  CHECK(changes == 1);
  CHECK((*lease(cluster))["spec"]["acquireTime"] == created["spec"]["acquireTime"]);

  first.reset();  // released: its holder emptied
  REQUIRE(eventually([&] { return second.leading(); }));
  CHECK(holder(cluster) == "b");
  CHECK((*lease(cluster))["spec"]["leaseTransitions"] == 1);
}

TEST_CASE("leader: a holder that stopped renewing is replaced after the lease duration") {
  FakeCluster cluster;
  // A Lease held by a replica that died: the same record, never renewed.
  cluster.put({{"apiVersion", "coordination.k8s.io/v1"},
               {"kind", "Lease"},
               {"metadata", {{"name", "flux-operator"}, {"namespace", "flux-system"}}},
               {"spec",
                {{"holderIdentity", "dead"},
                 {"leaseDurationSeconds", 1},
                 {"renewTime", "2026-01-01T00:00:00.000000Z"}}}});
  auto started = std::chrono::steady_clock::now();
  LeaderElection election(
      cluster, quick("new"), [] {}, [](const std::string&) {});
  REQUIRE(eventually([&] { return election.leading(); }));
  // Not before the lease's duration (1 s) as this replica observed it.
  CHECK(std::chrono::steady_clock::now() - started >= std::chrono::seconds(1));
  CHECK(holder(cluster) == "new");
  CHECK((*lease(cluster))["spec"]["leaseTransitions"] == 1);
}

TEST_CASE("leader: a Lease that cannot be renewed within the deadline is lost") {
  FakeCluster cluster;
  std::atomic<int> changes{0};
  std::mutex mutex;
  std::vector<std::string> errors;
  LeaderElection election(
      cluster, quick("a"), [&] { ++changes; },
      [&](const std::string& error) {
        std::lock_guard lock(mutex);
        errors.push_back(error);
      });
  REQUIRE(eventually([&] { return election.leading(); }));
  {
    std::lock_guard lock(cluster.mutex());
    cluster.outage = fluxop::kube::ApiError("etcd is down", 500, "InternalError");
  }
  REQUIRE(eventually([&] { return election.lost(); }));
  CHECK_FALSE(election.leading());
  CHECK(changes == 2);  // led, then lost
  std::lock_guard lock(mutex);
  REQUIRE_FALSE(errors.empty());
  CHECK(errors.front() == "etcd is down");
}

TEST_CASE("leader: a Lease written by another replica in between is not overwritten") {
  FakeCluster cluster;
  LeaderOptions options = quick("a");
  options.retry_period = std::chrono::milliseconds(50);
  // Every write of the election's is preceded by another replica's.
  std::atomic<int> raced{0};
  cluster.put({{"apiVersion", "coordination.k8s.io/v1"},
               {"kind", "Lease"},
               {"metadata", {{"name", "flux-operator"}, {"namespace", "flux-system"}}},
               {"spec", {{"holderIdentity", ""}}}});
  {
    std::lock_guard lock(cluster.mutex());
    cluster.before_replace = [&](json& live) {
      live["metadata"]["resourceVersion"] =
          std::to_string(std::stoll(live["metadata"]["resourceVersion"].get<std::string>()) + 1);
      live["spec"]["holderIdentity"] = "b";
      ++raced;
    };
  }
  LeaderElection election(
      cluster, options, [] {}, [](const std::string&) {});
  // Several attempts, each refused: never leading meanwhile.
  REQUIRE(eventually([&] { return raced >= 3; }));
  CHECK_FALSE(election.leading());
  CHECK(holder(cluster) == "b");
}
