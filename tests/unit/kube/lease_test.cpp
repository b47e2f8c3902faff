// The Lease codec both the apply lock and leader election write with.
#include "core/kube/lease.h"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_cluster.h"

namespace fluxop::kube {
namespace {

using nlohmann::json;
using testing::FakeCluster;

TEST_CASE("lease: a record read from a Lease and written back") {
  FakeCluster cluster;
  ObjectKey key = lease_key("flux-system", "fluxopctl-flux");
  LeaseRecord record{"host/12", std::chrono::seconds(30), "2026-01-01T00:00:00.000001Z",
                     "2026-01-01T00:00:10.000002Z", std::nullopt};
  std::optional<json> created = write_lease(cluster, key, std::nullopt, record);
  REQUIRE(created);
  CHECK(cluster.logged("CREATE") == std::vector<std::string>{"Lease/flux-system/fluxopctl-flux"});
  CHECK((*created)["spec"] == json{{"holderIdentity", "host/12"},
                                   {"leaseDurationSeconds", 30},
                                   {"acquireTime", "2026-01-01T00:00:00.000001Z"},
                                   {"renewTime", "2026-01-01T00:00:10.000002Z"}});
  CHECK(lease_record(*created) == record);

  // Created again: another writer was first.
  CHECK_FALSE(write_lease(cluster, key, std::nullopt, record));

  // Replaced at the resourceVersion read, what else it holds kept.
  json live = *created;
  live["metadata"]["labels"] = {{"team", "a"}};
  cluster.objects.at("Lease/flux-system/fluxopctl-flux") = live;
  record.holder = "";
  record.transitions = 3;
  std::optional<json> replaced = write_lease(cluster, key, live, record);
  REQUIRE(replaced);
  CHECK((*replaced)["metadata"]["labels"] == json{{"team", "a"}});
  CHECK((*replaced)["spec"]["leaseTransitions"] == 3);
  CHECK(lease_record(*replaced) == record);

  // At a resourceVersion that moved since: refused.
  CHECK_FALSE(write_lease(cluster, key, live, record));

  CHECK(lease_record(json{{"kind", "Lease"}}) == LeaseRecord{});
}

TEST_CASE("lease: MicroTimes and holders") {
  auto time = std::chrono::system_clock::from_time_t(1'767'225'600) +
              std::chrono::microseconds(123'456);  // 2026-01-01T00:00:00.123456Z
  CHECK(micro_time(time) == "2026-01-01T00:00:00.123456Z");
  CHECK(parse_micro_time("2026-01-01T00:00:00.123456Z") ==
        std::chrono::system_clock::from_time_t(1'767'225'600));
  CHECK(parse_micro_time("yesterday") == std::chrono::system_clock::time_point{});

  std::string self = process_identity();
  CHECK(self.ends_with("/" + std::to_string(getpid())));
  CHECK_FALSE(holder_died_here(self));
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  std::string host = self.substr(0, self.rfind('/'));
  CHECK(holder_died_here(host + "/" + std::to_string(child)));
  CHECK_FALSE(holder_died_here("another-host/" + std::to_string(child)));

  std::string replica = replica_identity();
  CHECK(replica.starts_with(host + "_"));
  CHECK(replica.size() == host.size() + 17);
  CHECK(replica != replica_identity());
}

}  // namespace
}  // namespace fluxop::kube
