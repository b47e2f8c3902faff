#include "core/status/fleet_page.h"

#include <doctest/doctest.h>

#include "../kube/fake_cluster.h"
#include "core/base64.h"
#include "core/digest.h"
#include "core/reconcile/instance_object.h"
#include "core/status/page_parts.h"

namespace fluxop::status {
namespace {

using nlohmann::json;

json instance(const std::string& ready, const std::string& message) {
  return {
      {"apiVersion", "fluxcd.controlplane.io/v1"},
      {"kind", "FluxInstance"},
      {"metadata", {{"name", "flux"}, {"namespace", "flux-system"}}},
      {"spec", {{"distribution", {{"version", "2.x"}, {"artifact", "oci://ghcr.io/x/y:latest"}}}}},
      {"status",
       {{"conditions",
         json::array({{{"type", "Ready"},
                       {"status", ready},
                       {"reason", ready == "True" ? "ReconciliationSucceeded" : "BuildFailed"},
                       {"message", message}}})},
        {"lastAppliedRevision", "v2.9.4@sha256:abc"},
        {"lastHandledReconcileAt", "2026-12-07T01:00:00Z"},
        {"inventory", {{"entries", json::array({json::object(), json::object(), json::object()})}}},
        {"history", json::array({{{"lastReconciled", "2026-12-07T02:00:00Z"}}})}}}};
}

ClusterOverview cluster(const std::string& context, const json* live, int failing = 0,
                        int suspended = 0) {
  ClusterOverview overview;
  overview.context = context;
  overview.instance = instance_state(live);
  report::ReportSpec spec;
  spec.distribution.version = "v2.9.4";
  spec.reconcilers.push_back(
      {"kustomize.toolkit.fluxcd.io/v1", "Kustomization", {3, failing, suspended, ""}});
  overview.report = spec;
  return overview;
}

ClusterOverview unreachable(const std::string& context, const std::string& error) {
  ClusterOverview overview;
  overview.context = context;
  overview.error = error;
  return overview;
}

TEST_CASE("instance_state: read from the FluxInstance's spec and status") {
  json live = instance("False", "build failed");
  live["metadata"]["annotations"] = {{"fluxcd.controlplane.io/reconcile", "disabled"}};
  InstanceState state = instance_state(&live);
  CHECK(state.found);
  CHECK(state.ready == "False");
  CHECK(state.reason == "BuildFailed");
  CHECK(state.message == "build failed");
  CHECK(state.version_range == "2.x");
  CHECK(state.artifact == "oci://ghcr.io/x/y:latest");
  CHECK(state.last_applied_revision == "v2.9.4@sha256:abc");
  CHECK(state.last_reconciled == "2026-12-07T02:00:00Z");
  CHECK(state.last_handled_request == "2026-12-07T01:00:00Z");
  CHECK(state.suspended);
  CHECK(state.inventory_size == 3);
  CHECK_FALSE(instance_state(nullptr).found);
}

TEST_CASE(
    "sort_worst_first: unreachable, not ready (a component too), failing (most first), suspended, "
    "healthy") {
  json ready = instance("True", "ok");
  json failed = instance("False", "no");
  ClusterOverview stopped = cluster("e-stopped-controller", &ready);
  stopped.report->components.push_back({"kustomize-controller", false, "InProgress", "x"});
  std::vector<ClusterOverview> clusters{cluster("a-healthy", &ready),
                                        cluster("b-suspended", &ready, 0, 1),
                                        cluster("c-failing-1", &ready, 1),
                                        cluster("d-failing-5", &ready, 5),
                                        cluster("e-not-ready", &failed),
                                        cluster("f-no-instance", nullptr),
                                        stopped,
                                        unreachable("g-gone", "connection refused")};
  sort_worst_first(clusters);
  std::vector<std::string> order;
  for (const ClusterOverview& c : clusters) order.push_back(c.context);
  CHECK(order == std::vector<std::string>{"g-gone", "e-not-ready", "e-stopped-controller",
                                          "f-no-instance", "d-failing-5", "c-failing-1",
                                          "b-suspended", "a-healthy"});
  CHECK(health_name(health(clusters.front())) == "unreachable");
  CHECK(health_name(health(clusters.back())) == "healthy");
}

TEST_CASE("fleet_page: hostile values from a cluster are shown as text, never as markup") {
  json hostile = instance(
      "False", "<script>alert(1)</script> \"' pull https://bot:s3cret@git.example/x \x1b[31m");
  std::string page =
      fleet_page({cluster("prod\"><script>x</script>", &hostile)}, "2026-12-07T03:00:00Z");
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(page.find("prod&quot;&gt;&lt;script&gt;x&lt;/script&gt;") != std::string::npos);
  CHECK(page.find("s3cret") == std::string::npos);
  CHECK(page.find("https://***@git.example/x") != std::string::npos);
  CHECK(page.find('\x1b') == std::string::npos);
  CHECK(page.find("\\x1b[31m") != std::string::npos);
}

TEST_CASE("fleet_page: rows worst first, each linking to its cluster's overview") {
  json ready = instance("True", "Reconciliation finished");
  std::string page = fleet_page({cluster("east", &ready), unreachable("gone", "no route to host")},
                                "2026-12-07T03:00:00Z");
  std::size_t gone = page.find("<a href=\"#cluster-0\">gone</a>");
  std::size_t east = page.find("<a href=\"#cluster-1\">east</a>");
  REQUIRE(gone != std::string::npos);
  REQUIRE(east != std::string::npos);
  CHECK(gone < east);
  CHECK(page.find("id=\"cluster-0\"><h2>gone") != std::string::npos);
  CHECK(page.find("no route to host") != std::string::npos);
  CHECK(page.find("2 clusters, worst first; made 2026-12-07T03:00:00Z") != std::string::npos);
  CHECK(page.find("Reconciliation finished") != std::string::npos);
}

TEST_CASE("fleet_page: a newer version in range flagged on its row, and no reconciler rows") {
  json ready = instance("True", "Reconciliation finished");
  ClusterOverview behind = cluster("behind", &ready);
  behind.newer_in_range = "v2.9.5";
  ClusterOverview current = cluster("current", &ready);
  current.newer_in_range = "none";
  std::string page = fleet_page({behind, current}, "2026-12-07T03:00:00Z");
  CHECK(page.find("<th>Version range</th><th>Newer in range</th>") != std::string::npos);
  CHECK(page.find("<td>2.x</td><td class=\"suspended\">v2.9.5</td>") != std::string::npos);
  CHECK(page.find("<td>2.x</td><td>none</td>") != std::string::npos);
  // What only the daemon knows is left out, not shown as "-".
  CHECK(page.find("Next reconcile") == std::string::npos);
  CHECK(page.find("Signatures") == std::string::npos);
  behind.instance.next_reconcile = "2026-12-07T04:00:00Z";
  CHECK(cluster_overview(behind).str().find(
            "<th>Next reconcile</th><td>2026-12-07T04:00:00Z</td>") != std::string::npos);
}

json event(const std::string& name, const std::string& involved, const std::string& last_seen,
           const std::string& type, const std::string& message) {
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", name}, {"namespace", "flux-system"}}},
          {"involvedObject", {{"kind", "FluxInstance"}, {"name", involved}}},
          {"lastTimestamp", last_seen},
          {"type", type},
          {"reason", type == "Warning" ? "BuildFailed" : "ReconciliationSucceeded"},
          {"message", message},
          {"count", 2}};
}

TEST_CASE("object_events: the object's newest first, at most ten, shown safely") {
  testing::FakeCluster api;
  api.served.insert("/v1/Event");
  for (int i = 0; i < 12; ++i) {
    std::string minute = (i < 10 ? "0" : "") + std::to_string(i);
    api.put(event("e" + std::to_string(i), "flux", "2026-12-07T01:" + minute + ":00Z", "Normal",
                  "Reconciliation finished"));
  }
  api.put(event("other", "team-a", "2026-12-07T02:00:00Z", "Normal", "not this one"));
  api.put(event("hostile", "flux", "2026-12-07T01:30:00Z", "Warning",
                "<b>x</b> https://bot:s3cret@git.example/x \x1b[31m"));
  std::vector<ObjectEvent> events =
      object_events(api, reconcile::instance_ref("flux-system", "flux"));
  REQUIRE(events.size() == kMaxObjectEvents);
  CHECK(events[0].last_seen == "2026-12-07T01:30:00Z");
  CHECK(events[0].type == "Warning");
  CHECK(events[0].message == "<b>x</b> https://***@git.example/x \\x1b[31m");
  CHECK(events[0].count == 2);
  CHECK(events[1].last_seen == "2026-12-07T01:11:00Z");
  CHECK(events.back().last_seen == "2026-12-07T01:03:00Z");

  json ready = instance("True", "ok");
  ClusterOverview overview = cluster("east", &ready);
  overview.events = events;
  std::string html = cluster_overview(overview).str();
  CHECK(html.find("<h3>Events</h3>") != std::string::npos);
  CHECK(html.find("&lt;b&gt;x&lt;/b&gt; https://***@git.example/x") != std::string::npos);
  CHECK(html.find("s3cret") == std::string::npos);
  CHECK(html.find("<td class=\"false\">Warning</td>") != std::string::npos);
}

TEST_CASE("fleet_page: its policy allows its one style sheet by hash and nothing else") {
  std::string policy = content_security_policy("'none'");
  std::string hash = base64_encode(sha256_bytes(page_style()));
  CHECK(policy ==
        "default-src 'none'; style-src 'sha256-" + hash + "'; base-uri 'none'; form-action 'none'");
  std::string page = fleet_page({}, "2026-12-07T03:00:00Z");
  CHECK(page.find("<style>" + std::string(page_style()) + "</style>") != std::string::npos);
  CHECK(page.find("content=\"default-src &#39;none&#39;; style-src &#39;sha256-" + hash) !=
        std::string::npos);
}

}  // namespace
}  // namespace fluxop::status
