#include "core/status/cluster_pages.h"

#include <doctest/doctest.h>

#include "../kube/fake_cluster.h"
#include "core/rfc3339.h"
#include "core/status/page_parts.h"
#include "core/status/resources.h"

namespace fluxop::status {
namespace {

using nlohmann::json;

constexpr const char* kHostile =
    "<script>alert(1)</script> \"' pull https://bot:s3cret@git.example/x?token=t0ken \x1b[31m";

report::FluxResource resource(std::string kind, std::string name, std::string ready,
                              std::string message = "") {
  report::FluxResource made;
  made.kind = std::move(kind);
  made.ns = "apps";
  made.name = std::move(name);
  made.ready = std::move(ready);
  made.message = std::move(message);
  made.created = "2026-12-07T11:00:00Z";
  return made;
}

ClusterStatus cluster_status() {
  ClusterStatus status;
  status.overview.context = "kind-<prod>";
  status.overview.instance.found = true;
  status.overview.instance.ready = "True";
  status.overview.instance.message = kHostile;
  report::ReportSpec spec;
  spec.distribution.version = "v2.9.4";
  spec.reconcilers.push_back({"kustomize.toolkit.fluxcd.io/v1", "Kustomization", {2, 1, 1, ""}});
  status.overview.report = spec;
  status.reported_at = "2026-12-07T12:00:00Z";
  status.resources = {resource("Kustomization", "ok", "True"),
                      resource("Kustomization", "broken", "False", kHostile),
                      resource("GitRepository", "pending", "Unknown")};
  status.resources.push_back(resource("Kustomization", "paused", "True"));
  status.resources.back().suspended = true;
  return status;
}

PageResponse get(const ClusterStatus& status, std::string_view target) {
  return answer_status_request(&status, target, *parse_rfc3339("2026-12-07T12:00:00Z"));
}

TEST_CASE("status pages: 503 before the first report, 404 elsewhere, 400 for a bad query") {
  auto now = std::chrono::system_clock::now();
  for (const char* target : {"/", "/resources", "/api/v1/overview", "/api/v1/resources?page=2"}) {
    CAPTURE(target);
    CHECK(answer_status_request(nullptr, target, now).status == 503);
  }
  ClusterStatus status = cluster_status();
  for (const char* target : {"/metrics", "/api/v1", "/resources/x", "/index.html"}) {
    CAPTURE(target);
    CHECK(get(status, target).status == 404);
  }
  PageResponse bad = get(status, "/api/v1/resources?state=Broken");
  CHECK(bad.status == 400);
  CHECK(bad.content_type == "text/plain; charset=utf-8");
  CHECK(bad.body == "state: \"Broken\" is not Failed, Reconciling, Suspended or Ready\n");
  CHECK(get(status, "/resources?page=x").status == 400);
}

TEST_CASE("status pages: the overview counts the objects by state, each linking to them") {
  StatusBoard board;
  ClusterStatus status = cluster_status();
  board.publish(status);
  PageResponse page = board.answer("/", nullptr);
  CHECK(page.status == 200);
  CHECK(page.content_type == "text/html; charset=utf-8");
  const std::string& html = page.body;
  CHECK(html.find("<a href=\"/resources?state=Failed\">Failed</a></td><td class=\"number\">1<") !=
        std::string::npos);
  CHECK(html.find("<a href=\"/resources?state=Ready\">Ready</a></td><td class=\"number\">1<") !=
        std::string::npos);
  CHECK(html.find("Flux of kind-&lt;prod&gt;") != std::string::npos);
  CHECK(html.find("4 Flux objects") != std::string::npos);
  // The policy lets the form send its query here, and nowhere else.
  CHECK(html.find("form-action &#39;self&#39;") != std::string::npos);
}

TEST_CASE("status pages: hostile values are text, secrets redacted, in the pages and the API") {
  ClusterStatus status = cluster_status();
  sort_by_state(status.resources);
  for (const char* target : {"/", "/resources", "/resources?state=Failed"}) {
    CAPTURE(target);
    std::string html = get(status, target).body;
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
    CHECK(html.find("s3cret") == std::string::npos);
    CHECK(html.find("t0ken") == std::string::npos);
    CHECK(html.find('\x1b') == std::string::npos);
  }
  for (const char* target : {"/api/v1/overview", "/api/v1/resources"}) {
    CAPTURE(target);
    PageResponse api = get(status, target);
    CHECK(api.content_type == "application/json");
    CHECK(api.body.find("s3cret") == std::string::npos);
    CHECK(api.body.find("t0ken") == std::string::npos);
    CHECK(api.body.find('\x1b') == std::string::npos);
    CHECK(json::accept(api.body));
  }
}

TEST_CASE("status pages: the resources page and its API select the same rows") {
  ClusterStatus status = cluster_status();
  sort_by_state(status.resources);
  std::string html = get(status, "/resources?kind=Kustomization").body;
  // Failing first; the pending GitRepository filtered out.
  std::size_t broken = html.find(
      "<td><a href=\"/resource?kind=Kustomization&amp;namespace=apps&amp;name=broken\">broken</a>");
  std::size_t paused = html.find(">paused</a></td>");
  std::size_t ok = html.find(">ok</a></td>");
  CHECK(broken < paused);
  CHECK(paused < ok);
  CHECK(ok != std::string::npos);
  CHECK(html.find(">pending</a>") == std::string::npos);
  CHECK(html.find("3 objects matching, page 1 of 1") != std::string::npos);
  CHECK(html.find("<option value=\"Kustomization\" selected>") != std::string::npos);
  CHECK(html.find("<td>60m</td>") != std::string::npos);  // its age, as kubectl says it

  json api = json::parse(get(status, "/api/v1/resources?kind=Kustomization").body);
  CHECK(api["matching"] == 3);
  CHECK(api["pages"] == 1);
  CHECK(api["pageSize"] == 100);
  REQUIRE(api["items"].size() == 3);
  CHECK(api["items"][0]["name"] == "broken");
  CHECK(api["items"][0]["state"] == "Failed");
  CHECK(api["items"][1]["state"] == "Suspended");

  json overview = json::parse(get(status, "/api/v1/overview").body);
  CHECK(overview["context"] == "kind-<prod>");
  CHECK(overview["resources"]["total"] == 4);
  CHECK(overview["resources"]["states"] ==
        json{{"Failed", 1}, {"Reconciling", 1}, {"Suspended", 1}, {"Ready", 1}});
  CHECK(overview["report"]["reconcilers"][0]["stats"]["failing"] == 1);
  CHECK(overview["instance"]["ready"] == "True");
}

TEST_CASE("status pages: the pager's links keep the query, escaped") {
  ClusterStatus status = cluster_status();
  for (int i = 0; i < 150; ++i)
    status.resources.push_back(resource("HelmRelease", "r" + std::to_string(i), "True"));
  sort_by_state(status.resources);
  std::string first = get(status, "/resources?kind=HelmRelease&q=r").body;
  CHECK(first.find("rel=\"next\" href=\"/resources?kind=HelmRelease&amp;q=r&amp;page=2\"") !=
        std::string::npos);
  CHECK(first.find("rel=\"prev\"") == std::string::npos);
  std::string second = get(status, "/resources?kind=HelmRelease&q=r&page=2").body;
  CHECK(second.find("rel=\"prev\" href=\"/resources?kind=HelmRelease&amp;q=r\"") !=
        std::string::npos);
  CHECK(second.find("rel=\"next\"") == std::string::npos);
  CHECK(second.find("150 objects matching, page 2 of 2") != std::string::npos);
}

TEST_CASE("status pages: the details of an object of the report, read from the cluster") {
  ClusterStatus status = cluster_status();
  status.overview.instance.ns = "flux-system";
  status.overview.instance.name = "flux";
  sort_by_state(status.resources);
  testing::FakeCluster cluster;
  cluster.served.insert("kustomize.toolkit.fluxcd.io/v1/Kustomization");
  cluster.served.insert("source.toolkit.fluxcd.io/v1/GitRepository");
  cluster.served.insert("/v1/Event");
  cluster.put(
      {{"apiVersion", "kustomize.toolkit.fluxcd.io/v1"},
       {"kind", "Kustomization"},
       {"metadata", {{"name", "broken"}, {"namespace", "apps"}}},
       {"spec", {{"sourceRef", {{"kind", "GitRepository"}, {"name", "pending"}}}}},
       {"status",
        {{"conditions", json::array({{{"type", "Ready"},
                                      {"status", "False"},
                                      {"reason", "BuildFailed"},
                                      {"message", kHostile},
                                      {"lastTransitionTime", "2026-12-07T11:30:00Z"}}})},
         {"inventory",
          {{"entries", json::array({{{"id", "apps_settings__ConfigMap"}, {"v", "v1"}}})}}}}}});
  cluster.put({{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", "settings"}, {"namespace", "apps"}}}});
  cluster.put({{"apiVersion", "v1"},
               {"kind", "Event"},
               {"metadata", {{"name", "e1"}, {"namespace", "apps"}}},
               {"involvedObject", {{"kind", "Kustomization"}, {"name", "broken"}}},
               {"lastTimestamp", "2026-12-07T11:31:00Z"},
               {"type", "Warning"},
               {"reason", "BuildFailed"},
               {"message", kHostile}});
  auto details = [&](std::string_view target) {
    return answer_status_request(&status, target, std::chrono::system_clock::now(), &cluster);
  };
  PageResponse page = details("/resource?kind=Kustomization&namespace=apps&name=broken");
  REQUIRE(page.status == 200);
  const std::string& html = page.body;
  CHECK(html.find("<h2>Kustomization/apps/broken</h2>") != std::string::npos);
  CHECK(html.find("<td>BuildFailed</td>") != std::string::npos);
  CHECK(html.find("<td>2026-12-07T11:31:00Z</td>") != std::string::npos);  // the Event
  // The source links to its own page, with its state from the report.
  CHECK(
      html.find("<a href=\"/resource?kind=GitRepository&amp;namespace=apps&amp;name=pending\">"
                "GitRepository/apps/pending</a> <span class=\"reconciling\">Reconciling</span>") !=
      std::string::npos);
  CHECK(html.find("<li><span class=\"ready\">Ready</span> ConfigMap/apps/settings</li>") !=
        std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("s3cret") == std::string::npos);
  CHECK(html.find('\x1b') == std::string::npos);

  json api =
      json::parse(details("/api/v1/resource?kind=Kustomization&namespace=apps&name=broken").body);
  CHECK(api["ready"] == "False");
  CHECK(api["source"] ==
        json{{"kind", "GitRepository"}, {"namespace", "apps"}, {"name", "pending"}});
  CHECK(api["inventory"]["resources"][0]["state"] == "Ready");
  CHECK(api["events"][0]["reason"] == "BuildFailed");
  CHECK(api.dump().find("s3cret") == std::string::npos);

  // Only the report's objects and the instance; the kind, namespace and name all given.
  CHECK(details("/resource?kind=ConfigMap&namespace=apps&name=settings").status == 404);
  CHECK(details("/resource?kind=Kustomization&namespace=apps").status == 400);
  CHECK(details("/resource?kind=FluxInstance&namespace=flux-system&name=flux").status == 404);
  CHECK(answer_status_request(&status, "/resource?kind=Kustomization&namespace=apps&name=broken",
                              std::chrono::system_clock::now())
            .status == 503);
  CHECK(answer_status_request(nullptr, "/resource?kind=Kustomization&namespace=apps&name=broken",
                              std::chrono::system_clock::now(), &cluster)
            .status == 503);
}

TEST_CASE("status pages: every answer's headers") {
  std::vector<std::pair<std::string, std::string>> headers = status_headers();
  auto value = [&](const std::string& name) {
    for (const auto& [header, text] : headers) {
      if (header == name) return text;
    }
    return std::string();
  };
  CHECK(value("Content-Security-Policy") ==
        content_security_policy("'self'") + "; frame-ancestors 'none'");
  CHECK(value("Content-Security-Policy").starts_with("default-src 'none'; style-src 'sha256-"));
  CHECK(value("X-Content-Type-Options") == "nosniff");
  CHECK(value("Cache-Control") == "no-store");
  CHECK(value("Referrer-Policy") == "no-referrer");
}

}  // namespace
}  // namespace fluxop::status
