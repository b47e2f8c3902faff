// The FluxInstance read from the cluster, through its watch, on a cluster in
// memory.
#include "core/daemon/instance_source.h"

#include <doctest/doctest.h>
#include <poll.h>

#include <string>
#include <vector>

#include "../kube/fake_cluster.h"

namespace fluxop::daemon {
namespace {

using nlohmann::json;
using testing::FakeCluster;

json flux_instance(int generation) {
  return {{"apiVersion", "fluxcd.controlplane.io/v1"},
          {"kind", "FluxInstance"},
          {"metadata",
           {{"name", "flux"},
            {"namespace", "flux-system"},
            {"uid", "1234"},
            {"generation", generation},
            {"annotations", {{"fluxcd.controlplane.io/reconcileEvery", "1h"}}}}},
          {"spec", {{"distribution", {{"version", "2.x"}, {"registry", "ghcr.io/fluxcd"}}}}},
          {"status", {{"lastAppliedRevision", "v2.7.0"}}}};
}

// Whether the source says the instance may have changed.
bool woken(const InstanceSource& source) {
  pollfd fd{source.change_fd(), POLLIN, 0};
  return poll(&fd, 1, 0) == 1;
}

struct Watched {
  FakeCluster cluster;
  std::vector<std::string> errors;

  Watched() { cluster.served.insert("fluxcd.controlplane.io/v1/FluxInstance"); }
};

}  // namespace

// Every daemon starts before its watch has listed: that is no problem to
// log (the list wakes the daemon with the answer).
TEST_CASE("cluster source: before the watch's first list, nothing is known and nothing is wrong") {
  Watched watched;
  watched.cluster.watches_list = false;
  ClusterSource source(watched.cluster, "flux-system", {});
  Observed first = source.read();
  CHECK_FALSE(first.flux);
  CHECK(first.problem.empty());
  CHECK_FALSE(first.missing);
  CHECK_FALSE(woken(source));

  watched.cluster.sync_watches();
  REQUIRE(woken(source));
  Observed listed = source.read();
  CHECK_FALSE(listed.flux);
  CHECK(listed.problem == "FluxInstance/flux-system/flux: not found");
  CHECK(listed.missing);
  CHECK_FALSE(woken(source));  // read() took the wake-up
}

TEST_CASE("cluster source: a change of spec or annotations wakes it with a new key, status not") {
  Watched watched;
  ClusterSource source(watched.cluster, "flux-system",
                       [&](const std::string& error) { watched.errors.push_back(error); });
  source.read();
  watched.cluster.put(flux_instance(1));
  REQUIRE(woken(source));
  Observed created = source.read();
  REQUIRE(created.flux);
  CHECK(created.flux->name == "flux");
  CHECK(created.flux->distribution.version == "2.x");
  CHECK(created.uid == "1234");
  CHECK(created.key == R"(1234 1 {"fluxcd.controlplane.io/reconcileEvery":"1h"})");
  CHECK_FALSE(created.deleting);

  // Written again with the same generation and annotations (a status write):
  // woken, and the key says nothing changed.
  json status_only = flux_instance(1);
  status_only["status"]["lastAppliedRevision"] = "v2.7.1";
  watched.cluster.put(status_only);
  REQUIRE(woken(source));
  CHECK(source.read().key == created.key);

  watched.cluster.put(flux_instance(2));
  REQUIRE(woken(source));
  CHECK(source.read().key == R"(1234 2 {"fluxcd.controlplane.io/reconcileEvery":"1h"})");

  // Deleted while a finalizer holds it: being deleted, to uninstall.
  watched.cluster.stuck.insert("FluxInstance/flux-system/flux");
  watched.cluster.remove({"fluxcd.controlplane.io", "v1", "FluxInstance", "flux-system", "flux"});
  REQUIRE(woken(source));
  Observed deleting = source.read();
  CHECK(deleting.deleting);
  CHECK(deleting.key.ends_with(" deleting"));

  watched.cluster.stuck.clear();
  watched.cluster.remove({"fluxcd.controlplane.io", "v1", "FluxInstance", "flux-system", "flux"});
  REQUIRE(woken(source));
  CHECK(source.read().missing);

  watched.cluster.fail_watches("FluxInstance/flux-system/flux: forbidden");
  CHECK(watched.errors == std::vector<std::string>{"FluxInstance/flux-system/flux: forbidden"});
}

TEST_CASE("cluster source: an instance that does not load is a problem with a key") {
  Watched watched;
  ClusterSource source(watched.cluster, "flux-system", {});
  json broken = flux_instance(3);
  broken["spec"]["distribution"].erase("version");
  watched.cluster.put(broken);
  Observed observed = source.read();
  CHECK_FALSE(observed.flux);
  CHECK_FALSE(observed.missing);
  CHECK(observed.key.starts_with("1234 3 "));
  CHECK(observed.problem.find(".spec.distribution.version") != std::string::npos);
}

}  // namespace fluxop::daemon
