#include "core/daemon/leader.h"

#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

#include "../eventually.h"
#include "../kube/fake_api_server.h"

using fluxop::daemon::LeaderElection;
using fluxop::daemon::LeaderOptions;
using fluxop::testing::eventually;
using fluxop::testing::FakeApiServer;
using fluxop::testing::FakeRequest;
using fluxop::testing::FakeResponse;
using nlohmann::json;

namespace {

const std::string kLeases = "/apis/coordination.k8s.io/v1/namespaces/flux-system/leases";

// One Lease, kept as the API server keeps it: created once, replaced only at
// its resourceVersion.
class LeaseServer {
 public:
  LeaseServer() : server_([this](const FakeRequest& request) { return answer(request); }) {}

  std::optional<json> lease() {
    std::lock_guard lock(mutex_);
    return lease_;
  }
  std::string holder() {
    std::optional<json> current = lease();
    return current ? (*current)["spec"].value("holderIdentity", "") : "";
  }
  void set_failing(bool failing) { failing_ = failing; }
  fluxop::kube::ClusterAccess access() const {
    fluxop::kube::ClusterAccess access;
    access.server = server_.url();
    access.token = "t";
    return access;
  }

 private:
  FakeResponse answer(const FakeRequest& request) {
    if (failing_) return {500, R"({"kind":"Status","message":"etcd is down","code":500})", ""};
    std::lock_guard lock(mutex_);
    if (request.method == "GET") {
      if (!lease_) return {404, R"({"kind":"Status","reason":"NotFound","code":404})", ""};
      return {200, lease_->dump(), ""};
    }
    json body = json::parse(request.body);
    if (request.method == "POST" && request.target == kLeases) {
      if (lease_) return {409, R"({"kind":"Status","reason":"AlreadyExists","code":409})", ""};
      body["metadata"]["resourceVersion"] = std::to_string(++version_);
      lease_ = body;
      return {201, body.dump(), ""};
    }
    if (request.method == "PUT" && lease_ &&
        body["metadata"].value("resourceVersion", "") == (*lease_)["metadata"]["resourceVersion"]) {
      body["metadata"]["resourceVersion"] = std::to_string(++version_);
      lease_ = body;
      return {200, body.dump(), ""};
    }
    return {409, R"({"kind":"Status","reason":"Conflict","code":409})", ""};
  }

  std::mutex mutex_;
  std::optional<json> lease_;
  int version_ = 0;
  std::atomic<bool> failing_{false};
  FakeApiServer server_;
};

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
  LeaseServer server;
  std::atomic<int> changes{0};
  auto first = std::make_unique<LeaderElection>(
      server.access(), quick("a"), [&] { ++changes; }, [](const std::string&) {});
  REQUIRE(eventually([&] { return first->leading(); }));
  json lease = *server.lease();
  CHECK(lease["metadata"]["name"] == "flux-operator");
  CHECK(lease["spec"]["holderIdentity"] == "a");
  CHECK(lease["spec"]["leaseDurationSeconds"] == 5);
  CHECK(lease["spec"]["leaseTransitions"] == 0);
  CHECK(std::string(lease["spec"]["renewTime"]).size() == 27);  // ...T18:20:00.123456Z

  LeaderElection second(
      server.access(), quick("b"), [] {}, [](const std::string&) {});
  // The first keeps renewing: the second never leads meanwhile.
  std::string renewed = lease["spec"]["renewTime"];
  REQUIRE(eventually([&] { return (*server.lease())["spec"]["renewTime"] != renewed; }));
  CHECK_FALSE(second.leading());
  CHECK(changes == 1);

  first.reset();  // released: its holder emptied
  REQUIRE(eventually([&] { return second.leading(); }));
  CHECK(server.holder() == "b");
  CHECK((*server.lease())["spec"]["leaseTransitions"] == 1);
}

TEST_CASE("leader: a holder that stopped renewing is replaced after the lease duration") {
  LeaseServer server;
  // A Lease held by a replica that died: the same record, never renewed.
  fluxop::kube::KubeClient client(server.access());
  json dead = {{"apiVersion", "coordination.k8s.io/v1"},
               {"kind", "Lease"},
               {"metadata", {{"name", "flux-operator"}, {"namespace", "flux-system"}}},
               {"spec",
                {{"holderIdentity", "dead"},
                 {"leaseDurationSeconds", 1},
                 {"renewTime", "2026-01-01T00:00:00.000000Z"}}}};
  REQUIRE(client.request("POST", kLeases, "", dead.dump()).status == 201);
  auto started = std::chrono::steady_clock::now();
  LeaderElection election(
      server.access(), quick("new"), [] {}, [](const std::string&) {});
  REQUIRE(eventually([&] { return election.leading(); }));
  // Not before the lease's duration (1 s) as this replica observed it.
  CHECK(std::chrono::steady_clock::now() - started >= std::chrono::seconds(1));
  CHECK(server.holder() == "new");
}

TEST_CASE("leader: a Lease that cannot be renewed within the deadline is lost") {
  LeaseServer server;
  std::atomic<int> changes{0};
  std::mutex mutex;
  std::vector<std::string> errors;
  LeaderElection election(
      server.access(), quick("a"), [&] { ++changes; },
      [&](const std::string& error) {
        std::lock_guard lock(mutex);
        errors.push_back(error);
      });
  REQUIRE(eventually([&] { return election.leading(); }));
  server.set_failing(true);
  REQUIRE(eventually([&] { return election.lost(); }));
  CHECK_FALSE(election.leading());
  CHECK(changes == 2);  // led, then lost
  std::lock_guard lock(mutex);
  REQUIRE_FALSE(errors.empty());
  CHECK(errors.front().find("etcd is down") != std::string::npos);
}
