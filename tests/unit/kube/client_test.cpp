#include "core/kube/client.h"

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "../temp_dir.h"
#include "fake_api_server.h"

using fluxop::kube::api_error;
using fluxop::kube::ApiError;
using fluxop::kube::ObjectKey;

TEST_CASE("client: object keys and names") {
  ObjectKey key = fluxop::kube::object_key(nlohmann::json::parse(
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"flux-system","name":"source-controller"}})"));
  CHECK(key.group == "apps");
  CHECK(key.version == "v1");
  CHECK(fluxop::kube::display_name(key) == "Deployment/flux-system/source-controller");
  ObjectKey ns = fluxop::kube::object_key(
      nlohmann::json::parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}})"));
  CHECK(ns.group.empty());
  CHECK(fluxop::kube::display_name(ns) == "Namespace/x");
}

TEST_CASE("client: API errors decoded from the Status object, naming the object once") {
  ApiError forbidden = api_error(
      "Deployment/flux-system/source-controller", 403,
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"deployments.apps \"source-controller\" is forbidden: User \"x\" cannot patch resource \"deployments\" in API group \"apps\" in the namespace \"flux-system\"","reason":"Forbidden","details":{"name":"source-controller","group":"apps","kind":"deployments"},"code":403})");
  CHECK(std::string(forbidden.what()) ==
        "Deployment/flux-system/source-controller: forbidden: User \"x\" cannot patch resource "
        "\"deployments\" in API group \"apps\" in the namespace \"flux-system\"");
  CHECK(forbidden.status() == 403);
  CHECK(forbidden.reason() == "Forbidden");

  CHECK(
      std::string(
          api_error(
              "ConfigMap/ns/cm", 409,
              R"({"kind":"Status","message":"configmaps \"cm\" already exists","reason":"AlreadyExists","code":409})")
              .what()) == "ConfigMap/ns/cm: already exists");
  CHECK(
      std::string(
          api_error(
              "ConfigMap/ns/cm", 409,
              R"({"kind":"Status","message":"Operation cannot be fulfilled on configmaps \"cm\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","code":409})")
              .what()) ==
      "ConfigMap/ns/cm: conflict: the object has been modified; please apply your changes to the "
      "latest version and try again");
  CHECK(
      std::string(
          api_error(
              "ConfigMap/ns/cm", 422,
              R"({"kind":"Status","message":"ConfigMap \"cm\" is invalid: metadata.name: Invalid value: \"CM\": a lowercase RFC 1123 subdomain","reason":"Invalid","code":422})")
              .what()) ==
      "ConfigMap/ns/cm: invalid: metadata.name: Invalid value: \"CM\": a lowercase RFC 1123 "
      "subdomain");
  CHECK(
      std::string(
          api_error(
              "ConfigMap in ns", 403,
              R"({"kind":"Status","message":"configmaps is forbidden: User \"nobody\" cannot list resource \"configmaps\"","reason":"Forbidden","code":403})")
              .what()) ==
      "ConfigMap in ns: forbidden: User \"nobody\" cannot list resource \"configmaps\"");
  CHECK(std::string(api_error("x", 502, "<html>Bad gateway</html>\nmore").what()) ==
        "x: HTTP 502: <html>Bad gateway</html>");
  // A generic message says what happened only in its causes: quoted.
  CHECK(
      std::string(
          api_error(
              "Deployment/ns/d", 422,
              R"({"kind":"Status","message":"the server rejected our request due to an error in our request","reason":"Invalid","details":{"causes":[{"reason":"UnexpectedServerResponse","message":"testing value /metadata/resourceVersion failed: test failed"}]},"code":422})")
              .what()) ==
      "Deployment/ns/d: invalid: the server rejected our request due to an error in our request "
      "(testing value /metadata/resourceVersion failed: test failed)");
}

TEST_CASE("client: an API server that is down is reported after the retries") {
  // A port nobody listens on: bound, never listened to.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  std::string server = "http://127.0.0.1:" + std::to_string(ntohs(address.sin_port));

  fluxop::kube::ClusterAccess access;
  access.server = server;
  access.context = "kind-test";
  access.token = "never-shown";
  fluxop::kube::ClientOptions options;
  options.backoff = std::chrono::milliseconds(50);
  fluxop::kube::KubeClient client(access, options);
  try {
    client.request("GET", "/version");
    FAIL("no error");
  } catch (const fluxop::Error& e) {
    std::string message = e.what();
    CHECK(message.starts_with(server + "/version: "));
    CHECK(message.find("(after 4 attempts) (context \"kind-test\")") != std::string::npos);
    CHECK(message.find("never-shown") == std::string::npos);
  }
  CHECK(client.requests_sent() == 4);
  close(fd);
}

namespace {

using fluxop::testing::FakeApiServer;
using fluxop::testing::FakeRequest;
using fluxop::testing::FakeResponse;

fluxop::kube::ClusterAccess fake_access(const FakeApiServer& server) {
  fluxop::kube::ClusterAccess access;
  access.server = server.url();
  access.token = "t";
  access.default_namespace = "home";
  return access;
}

fluxop::kube::ClientOptions fast_retries() {
  fluxop::kube::ClientOptions options;
  options.backoff = std::chrono::milliseconds(10);
  return options;
}

}  // namespace

TEST_CASE(
    "client: discovery falls back to the group-version lists, paths in the context's namespace") {
  FakeApiServer server([](const FakeRequest& request) -> FakeResponse {
    if (request.target == "/api") return {200, R"({"kind":"APIVersions","versions":["v1"]})", ""};
    if (request.target == "/api/v1")
      return {200,
              R"({"kind":"APIResourceList","groupVersion":"v1","resources":[
                   {"name":"configmaps","namespaced":true,"kind":"ConfigMap"}]})",
              ""};
    if (request.target == "/apis")
      return {200,
              R"({"kind":"APIGroupList","groups":[{"name":"apps",
                   "versions":[{"groupVersion":"apps/v1","version":"v1"}]}]})",
              ""};
    if (request.target == "/apis/apps/v1")
      return {200,
              R"({"kind":"APIResourceList","groupVersion":"apps/v1","resources":[
                   {"name":"deployments","namespaced":true,"kind":"Deployment"},
                   {"name":"deployments/scale","namespaced":true,"kind":"Scale"}]})",
              ""};
    return {404, R"({"kind":"Status","reason":"NotFound","message":"x not found","code":404})", ""};
  });
  fluxop::kube::KubeClient client(fake_access(server), fast_retries());
  CHECK(client.mapper().mapping("apps", "v1", "Deployment").resource == "deployments");
  CHECK(client.mapper().discovery_requests() == 4);
  CHECK_FALSE(client.get({"", "v1", "ConfigMap", "", "missing"}));
  std::vector<FakeRequest> requests = server.requests();
  CHECK(requests.back().target == "/api/v1/namespaces/home/configmaps/missing");
  CHECK(requests.back().authorization == "Bearer t");
}

TEST_CASE("client: 503 is retried, a POST that failed on the server is not") {
  int calls = 0;
  FakeApiServer server([&calls](const FakeRequest& request) -> FakeResponse {
    if (request.method == "POST") return {500, R"({"kind":"Status","message":"etcd hiccup"})", ""};
    return ++calls == 1 ? FakeResponse{503, "", "Retry-After: 0\r\n"}
                        : FakeResponse{200, R"({"gitVersion":"v1.34.10"})", ""};
  });
  fluxop::kube::KubeClient client(fake_access(server), fast_retries());
  CHECK(client.request("GET", "/version").status == 200);
  CHECK(client.requests_sent() == 2);
  CHECK(client.request("POST", "/api/v1/namespaces", "", "{}").status == 500);
  CHECK(client.requests_sent() == 3);
}

TEST_CASE("client: a 401 runs the exec plugin again, once") {
  fluxop::testing::TempDir dir;
  dir.write("plugin", R"(#!/bin/sh
runs=$(($(cat "$0.runs" 2>/dev/null || echo 0) + 1))
echo "$runs" > "$0.runs"
echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"run'$runs'"}}'
)");
  chmod((dir.path() / "plugin").c_str(), 0755);
  FakeApiServer server([](const FakeRequest& request) -> FakeResponse {
    if (request.authorization == "Bearer run2") return {200, "{}", ""};
    return {401, R"({"kind":"Status","reason":"Unauthorized","message":"Unauthorized","code":401})",
            ""};
  });
  fluxop::kube::ClusterAccess access = fake_access(server);
  access.token.clear();
  access.exec = fluxop::kube::ExecPlugin{"client.authentication.k8s.io/v1beta1",
                                         (dir.path() / "plugin").string(),
                                         {},
                                         {},
                                         false,
                                         "",
                                         "t"};
  fluxop::kube::KubeClient client(access, fast_retries());
  CHECK(client.request("GET", "/version").status == 200);
  CHECK(client.requests_sent() == 2);
  CHECK(client.request("GET", "/version").status == 200);  // run2's token is kept
  CHECK(server.requests().size() == 3);
}

// An API server that restarts in the middle of an apply: once it has
// answered, failures are retried until retry_until, not only `attempts` times.
TEST_CASE("client: an outage after the first answer is retried until retry_until") {
  using Clock = std::chrono::steady_clock;
  std::mutex mutex;
  std::optional<Clock::time_point> down_until;
  FakeApiServer server([&](const FakeRequest&) -> FakeResponse {
    std::lock_guard lock(mutex);
    if (!down_until) {
      down_until = Clock::now() + std::chrono::milliseconds(1500);
    } else if (Clock::now() < *down_until) {
      return {503, "", ""};
    }
    return {200, R"({"gitVersion":"v1.34.10"})", ""};
  });
  fluxop::kube::ClientOptions patient = fast_retries();
  patient.retry_until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  fluxop::kube::KubeClient client(fake_access(server), patient);
  CHECK(client.request("GET", "/version").status == 200);  // up; then down for 1.5 s
  CHECK(client.request("GET", "/version").status == 200);  // waited for
  CHECK(client.requests_sent() > fast_retries().attempts + 1);

  // Without it, the outage outlasts the retries.
  {
    std::lock_guard lock(mutex);
    down_until.reset();
  }
  fluxop::kube::KubeClient hasty(fake_access(server), fast_retries());
  CHECK(hasty.request("GET", "/version").status == 200);
  CHECK(hasty.request("GET", "/version").status == 503);
  CHECK(hasty.requests_sent() == 1 + fast_retries().attempts);
}

namespace {

// A server that knows ConfigMaps and answers everything else with `answer`.
FakeApiServer configmap_server(std::function<FakeResponse(const FakeRequest&)> answer) {
  return FakeApiServer([answer](const FakeRequest& request) -> FakeResponse {
    if (request.target == "/api") return {200, R"({"kind":"APIVersions","versions":["v1"]})", ""};
    if (request.target == "/apis") return {200, R"({"kind":"APIGroupList","groups":[]})", ""};
    if (request.target == "/api/v1")
      return {200,
              R"({"kind":"APIResourceList","groupVersion":"v1","resources":[
                   {"name":"configmaps","namespaced":true,"kind":"ConfigMap"}]})",
              ""};
    return answer(request);
  });
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const fluxop::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("client: answers nested beyond the bound are refused, naming the request") {
  std::string deep = std::string(20'000, '[') + std::string(20'000, ']');
  FakeApiServer server = configmap_server([&](const FakeRequest&) -> FakeResponse {
    return {200, deep, ""};
  });
  fluxop::kube::KubeClient client(fake_access(server), fast_retries());
  CHECK(error_of([&] {
          client.get({"", "v1", "ConfigMap", "ns", "cm"});
        }) ==
        "ConfigMap/ns/cm: the API server's answer to GET /api/v1/namespaces/ns/configmaps/cm: "
        "nesting deeper than 256 levels");
  CHECK(error_of([&] {
          client.list({"", "v1", "ConfigMap", "ns", ""});
        }) ==
        "ConfigMap in ns: the API server's answer to GET /api/v1/namespaces/ns/configmaps: "
        "nesting deeper than 256 levels");
}

TEST_CASE("client: lists are read in pages, a list without end is cut, its items must be objects") {
  FakeApiServer server = configmap_server([](const FakeRequest& request) -> FakeResponse {
    std::string_view target = request.target;
    if (target.starts_with("/api/v1/namespaces/paged/configmaps?limit=500")) {
      if (target.find("continue=next") == std::string_view::npos)
        return {200, R"({"metadata":{"continue":"next"},"items":[{"metadata":{"name":"a"}}]})", ""};
      return {200, R"({"metadata":{},"items":[{"metadata":{"name":"b"}}]})", ""};
    }
    if (target.starts_with("/api/v1/namespaces/endless/configmaps?"))
      return {200, R"({"metadata":{"continue":"again"},"items":[]})", ""};
    return {200, R"({"items":[1]})", ""};
  });
  fluxop::kube::KubeClient client(fake_access(server), fast_retries());
  std::vector<nlohmann::json> paged = client.list({"", "v1", "ConfigMap", "paged", ""});
  REQUIRE(paged.size() == 2);
  CHECK(paged[0]["metadata"]["name"] == "a");
  CHECK(paged[1]["metadata"]["name"] == "b");
  CHECK(paged[1]["kind"] == "ConfigMap");
  CHECK(error_of([&] {
          client.list({"", "v1", "ConfigMap", "endless", ""});
        }) ==
        "ConfigMap in endless: the API server's answer to GET "
        "/api/v1/namespaces/endless/configmaps: a list of more than 2000 pages");
  CHECK(error_of([&] {
          client.list({"", "v1", "ConfigMap", "odd", ""});
        }) ==
        "ConfigMap in odd: the API server's answer to GET /api/v1/namespaces/odd/configmaps: a "
        "list item that is not an object");
}

// A server of `count` ConfigMaps in namespace "many", in pages of the size
// each request's limit asks for (the continue token is the next index), as
// the API server pages them; `pages` counts the pages served, and `on_page`
// is called as each is asked for.
FakeApiServer paging_server(int count, std::atomic<int>& pages,
                            const std::function<void()>& on_page = {}) {
  return configmap_server([count, &pages, on_page](const FakeRequest& request) -> FakeResponse {
    std::string_view target = request.target;
    auto param = [&](std::string_view name) -> int {
      std::size_t at = target.find(std::string(name) + "=");
      return at == std::string_view::npos ? -1 : std::atoi(target.data() + at + name.size() + 1);
    };
    int limit = param("limit");
    int from = std::max(param("continue"), 0);
    if (limit <= 0) return {400, R"({"kind":"Status","reason":"BadRequest","code":400})", ""};
    ++pages;
    if (on_page) on_page();
    int to = std::min(count, from + limit);
    std::string items;
    for (int i = from; i < to; ++i)
      items += (i == from ? "" : ",") + std::string(R"({"metadata":{"name":"cm-)") +
               std::to_string(i) + R"("}})";
    std::string next = to < count ? std::to_string(to) : "";
    return {200, R"({"metadata":{"continue":")" + next + R"("},"items":[)" + items + "]}", ""};
  });
}

TEST_CASE("client: a list of 1,200 objects takes three pages of 500, as kubectl reads it") {
  std::atomic<int> pages = 0;
  FakeApiServer server = paging_server(1200, pages);
  fluxop::kube::KubeClient client(fake_access(server), fast_retries());
  std::vector<nlohmann::json> all = client.list({"", "v1", "ConfigMap", "many", ""});
  REQUIRE(all.size() == 1200);
  CHECK(all[1199]["metadata"]["name"] == "cm-1199");
  CHECK(pages == 3);
}

TEST_CASE("client: list_each hands each page's objects over before it asks for the next") {
  std::atomic<int> pages = 0;
  std::atomic<int> visited = 0;
  std::vector<int> visited_when_asked;
  FakeApiServer server =
      paging_server(1200, pages, [&] { visited_when_asked.push_back(visited.load()); });
  fluxop::kube::KubeClient client(fake_access(server), fast_retries());
  std::vector<std::string> names;
  client.list_each({{{"", "v1", "ConfigMap", "many", ""}, {}, ""}},
                   [&](std::size_t query, nlohmann::json&& object) {
                     CHECK(query == 0);
                     CHECK(object["kind"] == "ConfigMap");
                     names.push_back(object["metadata"]["name"]);
                     ++visited;
                   });
  REQUIRE(names.size() == 1200);
  CHECK(names.back() == "cm-1199");
  CHECK(visited_when_asked == std::vector<int>{0, 500, 1000});
}

TEST_CASE("client: list_streamed reads each list whole, one request each, without managedFields") {
  std::atomic<int> requests = 0;
  FakeApiServer server = configmap_server([&](const FakeRequest& request) -> FakeResponse {
    ++requests;
    std::string_view target = request.target;
    if (target.find("limit=") != std::string_view::npos)
      return {400, R"({"kind":"Status","reason":"BadRequest","code":400})", ""};
    if (target == "/api/v1/namespaces/whole/configmaps") {
      std::string items;
      for (int i = 0; i < 1200; ++i)
        items += (i == 0 ? "" : ",") + std::string(R"({"metadata":{"name":"cm-)") +
                 std::to_string(i) + R"(","managedFields":[{"manager":"m"}]},"data":{"a":"}"}})";
      return {200, R"({"kind":"ConfigMapList","metadata":{},"items":[)" + items + "]}", ""};
    }
    // A server that pages unasked is followed.
    if (target == "/api/v1/namespaces/unasked/configmaps")
      return {200, R"({"metadata":{"continue":"next"},"items":[{"metadata":{"name":"a"}}]})", ""};
    if (target == "/api/v1/namespaces/unasked/configmaps?continue=next")
      return {200, R"({"metadata":{},"items":[{"metadata":{"name":"b"}}]})", ""};
    return {200, R"({"items":3})", ""};
  });
  fluxop::kube::KubeClient client(fake_access(server), fast_retries());
  std::vector<std::vector<std::string>> names(2);
  client.list_streamed({{{"", "v1", "ConfigMap", "whole", ""}, {}, ""},
                        {{"", "v1", "ConfigMap", "unasked", ""}, {}, ""}},
                       [&](std::size_t query, nlohmann::json&& object) {
                         CHECK(object["kind"] == "ConfigMap");
                         CHECK(object["apiVersion"] == "v1");
                         CHECK_FALSE(object["metadata"].contains("managedFields"));
                         names.at(query).push_back(object["metadata"]["name"]);
                       });
  REQUIRE(names[0].size() == 1200);
  CHECK(names[0].back() == "cm-1199");
  CHECK(names[1] == std::vector<std::string>{"a", "b"});
  CHECK(requests == 3);
  CHECK(error_of([&] {
          client.list_streamed({{{"", "v1", "ConfigMap", "odd", ""}, {}, ""}},
                               [](std::size_t, nlohmann::json&&) {});
        }) ==
        "ConfigMap in odd: the API server's answer to GET /api/v1/namespaces/odd/configmaps: not "
        "a list");
}

TEST_CASE("client: a list asks for its label and field selectors") {
  std::string asked;
  FakeApiServer server = configmap_server([&](const FakeRequest& request) -> FakeResponse {
    asked = request.target;
    return {200, R"({"metadata":{},"items":[]})", ""};
  });
  fluxop::kube::KubeClient client(fake_access(server), fast_retries());
  client.list_all({{{"", "v1", "ConfigMap", "ns", ""}, {{"app", "a"}}, "", "metadata.uid=u 1"}});
  CHECK(asked ==
        "/api/v1/namespaces/ns/configmaps?labelSelector=app%3Da&fieldSelector=metadata.uid%3Du%201&"
        "limit=500");
}

TEST_CASE("client: every request carries the Impersonate-* headers") {
  FakeApiServer server([](const FakeRequest&) -> FakeResponse { return {200, "{}", ""}; });
  fluxop::kube::ClusterAccess access = fake_access(server);
  access.impersonate.user = "jane";
  access.impersonate.groups = {"dev", "ops"};
  fluxop::kube::KubeClient client(access, fast_retries());
  CHECK(client.request("GET", "/version").status == 200);
  REQUIRE(server.requests().size() == 1);
  // A copy: requests() answers with a vector of its own.
  const std::string head = server.requests()[0].head;
  CHECK(head.find("\r\nImpersonate-User: jane\r\n") != std::string::npos);
  CHECK(head.find("\r\nImpersonate-Group: dev\r\nImpersonate-Group: ops\r\n") != std::string::npos);

  access.impersonate.user.clear();
  access.impersonate_origin = "--as-group";
  CHECK_THROWS_WITH_AS(fluxop::kube::KubeClient(access, fast_retries()),
                       "--as-group: groups to impersonate without a user to impersonate",
                       fluxop::Error);
}
