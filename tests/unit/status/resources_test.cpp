#include "core/status/resources.h"

#include <doctest/doctest.h>

#include "core/error.h"
#include "core/rfc3339.h"

namespace fluxop::status {
namespace {

report::FluxResource resource(std::string kind, std::string ns, std::string name, std::string ready,
                              std::string reason = "") {
  report::FluxResource made;
  made.kind = std::move(kind);
  made.ns = std::move(ns);
  made.name = std::move(name);
  made.ready = std::move(ready);
  made.reason = std::move(reason);
  return made;
}

std::vector<std::string> names(const ResourcePage& page) {
  std::vector<std::string> out;
  for (const report::FluxResource* row : page.rows) out.push_back(row->name);
  return out;
}

TEST_CASE("resource_state: suspended wins, failing as the report counts it, ready when settled") {
  report::FluxResource failed = resource("Kustomization", "a", "x", "False", "BuildFailed");
  CHECK(resource_state(failed) == ResourceState::failed);
  failed.reconciling = true;  // retrying after a failure: still failed
  CHECK(resource_state(failed) == ResourceState::failed);
  failed.suspended = true;
  CHECK(resource_state(failed) == ResourceState::suspended);
  // Waiting for a dependency is not failing (report.h's failing count).
  CHECK(resource_state(resource("Kustomization", "a", "x", "False", "DependencyNotReady")) ==
        ResourceState::reconciling);
  CHECK(resource_state(resource("Kustomization", "a", "x", "Unknown", "Progressing")) ==
        ResourceState::reconciling);
  report::FluxResource ready = resource("Kustomization", "a", "x", "True");
  CHECK(resource_state(ready) == ResourceState::ready);
  ready.reconciling = true;
  CHECK(resource_state(ready) == ResourceState::reconciling);
  CHECK(state_name(ResourceState::failed) == "Failed");
  CHECK(state_name(ResourceState::ready) == "Ready");
}

TEST_CASE("sort_by_state and count_states: failing first, then by kind, namespace and name") {
  std::vector<report::FluxResource> resources{
      resource("Kustomization", "b", "ready", "True"),
      resource("GitRepository", "b", "failed-2", "False", "GitOperationFailed"),
      resource("GitRepository", "a", "failed-1", "False", "GitOperationFailed"),
      resource("Kustomization", "a", "pending", "Unknown")};
  resources.push_back(resource("HelmRelease", "a", "paused", "True"));
  resources.back().suspended = true;
  sort_by_state(resources);
  std::vector<std::string> order;
  for (const report::FluxResource& r : resources) order.push_back(r.name);
  CHECK(order == std::vector<std::string>{"failed-1", "failed-2", "pending", "paused", "ready"});
  CHECK(count_states(resources) == StateCounts{2, 1, 1, 1});
}

TEST_CASE("parse_resource_query: a form's query string, a bad state or page an error") {
  ResourceQuery query =
      parse_resource_query("state=Failed&kind=Kustomization&namespace=apps&q=a+b%26c&page=3&x=1");
  CHECK(query.state == ResourceState::failed);
  CHECK(query.kind == "Kustomization");
  CHECK(query.ns == "apps");
  CHECK(query.text == "a b&c");
  CHECK(query.page == 3);
  // Empty values, as a form sends an unset field, filter nothing.
  ResourceQuery empty = parse_resource_query("state=&kind=&q=&page=");
  CHECK_FALSE(empty.state);
  CHECK(empty.page == 1);
  CHECK_THROWS_WITH_AS(parse_resource_query("state=Broken"),
                       "state: \"Broken\" is not Failed, Reconciling, Suspended or Ready",
                       fluxop::Error);
  for (const char* page : {"page=0", "page=-1", "page=2x", "page=99999999999999999999999"}) {
    CAPTURE(page);
    CHECK_THROWS_AS(parse_resource_query(page), fluxop::Error);
  }
  // Back to a query string, for the pager's links.
  CHECK(query_string(query, 4) ==
        "state=Failed&kind=Kustomization&namespace=apps&q=a%20b%26c&page=4");
  CHECK(query_string(ResourceQuery{}, 1).empty());
}

TEST_CASE("select_resources: filters, a text in any letter case, pages of 100") {
  std::vector<report::FluxResource> resources;
  for (int i = 0; i < 250; ++i)
    resources.push_back(
        resource("Kustomization", i % 2 ? "odd" : "even", "k" + std::to_string(1000 + i), "True"));
  resources[7].message = "Applied revision: MAIN@sha1:abc";
  resources[8].ready = "False";

  ResourcePage all = select_resources(resources, {});
  CHECK(all.matching == 250);
  CHECK(all.pages == 3);
  CHECK(all.rows.size() == 100);
  CHECK(all.rows.front()->name == "k1000");

  ResourceQuery last;
  last.page = 3;
  ResourcePage third = select_resources(resources, last);
  CHECK(third.rows.size() == 50);
  CHECK(third.rows.back()->name == "k1249");
  last.page = 9;  // beyond the last: the last
  CHECK(select_resources(resources, last).page == 3);

  ResourceQuery text;
  text.text = "main@SHA1";
  CHECK(names(select_resources(resources, text)) == std::vector<std::string>{"k1007"});
  ResourceQuery failed;
  failed.state = ResourceState::failed;
  CHECK(names(select_resources(resources, failed)) == std::vector<std::string>{"k1008"});
  ResourceQuery odd;
  odd.ns = "odd";
  odd.kind = "Kustomization";
  CHECK(select_resources(resources, odd).matching == 125);
  odd.kind = "HelmRelease";
  ResourcePage none = select_resources(resources, odd);
  CHECK(none.matching == 0);
  CHECK(none.pages == 1);
  CHECK(none.rows.empty());
}

TEST_CASE("age: as kubectl's AGE column says it") {
  auto now = *parse_rfc3339("2026-12-07T12:00:00Z");
  CHECK(age("2026-12-07T11:59:18Z", now) == "42s");
  CHECK(age("2026-12-07T11:45:00Z", now) == "15m");
  CHECK(age("2026-12-07T07:00:00Z", now) == "5h");
  CHECK(age("2026-11-25T12:00:00Z", now) == "12d");
  CHECK(age("", now) == "-");
  CHECK(age("2026-12-08T00:00:00Z", now) == "0s");  // a clock ahead
}

}  // namespace
}  // namespace fluxop::status
