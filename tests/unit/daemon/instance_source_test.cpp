// The FluxInstance read from the cluster, through its watch.
#include "core/daemon/instance_source.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "../kube/fake_api_server.h"

namespace fluxop::daemon {
namespace {

using fluxop::testing::FakeApiServer;
using fluxop::testing::FakeRequest;
using fluxop::testing::FakeResponse;

// Every daemon starts before its watch has listed: that is no problem to
// log (the list wakes the daemon with the answer).
TEST_CASE("cluster source: before the watch's first list, nothing is known and nothing is wrong") {
  std::atomic<bool> answer{false};
  FakeApiServer server([&](const FakeRequest&) -> FakeResponse {
    // Held back until the first read was made (at most 30 s).
    for (int i = 0; i < 3000 && !answer; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return FakeResponse{503, "", ""};
  });
  kube::ClusterAccess access;
  access.server = server.url();
  access.token = "t";
  {
    ClusterSource source(access, "flux-system", {});
    Observed first = source.read();
    CHECK_FALSE(first.flux);
    CHECK(first.problem.empty());
    CHECK_FALSE(first.missing);
    answer = true;
  }
}

}  // namespace
}  // namespace fluxop::daemon
