#include "core/kube/watch.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "../eventually.h"
#include "fake_api_server.h"

using fluxop::kube::ObjectWatch;
using fluxop::testing::eventually;
using fluxop::testing::FakeApiServer;
using fluxop::testing::FakeRequest;
using fluxop::testing::FakeResponse;
using nlohmann::json;

namespace {

const std::string kList = "/api/v1/namespaces/flux-system/configmaps";

// Discovery of the core group, for ConfigMaps; nullopt for anything else.
std::optional<FakeResponse> discovery(const FakeRequest& request) {
  if (request.target == "/api") return FakeResponse{200, R"({"versions":["v1"]})", ""};
  if (request.target == "/api/v1")
    return FakeResponse{200,
                        R"({"groupVersion":"v1","resources":[
                   {"name":"configmaps","namespaced":true,"kind":"ConfigMap"}]})",
                        ""};
  if (request.target == "/apis") return FakeResponse{200, R"({"groups":[]})", ""};
  return std::nullopt;
}

json config_map(const std::string& version, const std::string& value) {
  return {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", "flux"}, {"namespace", "flux-system"}, {"resourceVersion", version}}},
      {"data", {{"value", value}}}};
}

std::string event(const std::string& type, const json& object) {
  return json{{"type", type}, {"object", object}}.dump() + "\n";
}

bool is_watch(const FakeRequest& request) {
  return request.target.find("watch=1") != std::string::npos;
}

std::string query_value(const std::string& target, const std::string& name) {
  std::size_t at = target.find(name + "=");
  if (at == std::string::npos) return "";
  at += name.size() + 1;
  return target.substr(at, target.find('&', at) - at);
}

fluxop::kube::ClusterAccess access_to(const FakeApiServer& server) {
  fluxop::kube::ClusterAccess access;
  access.server = server.url();
  access.token = "t";
  return access;
}

fluxop::kube::WatchOptions quick() {
  fluxop::kube::WatchOptions options;
  options.first_backoff = std::chrono::milliseconds(10);
  options.max_backoff = std::chrono::milliseconds(40);
  return options;
}

}  // namespace

TEST_CASE("watch: a list, then watches from its version, bookmarks, 410 Gone lists again") {
  std::mutex mutex;
  int watches = 0;
  FakeApiServer server([&](const FakeRequest& request) -> FakeResponse {
    if (auto answer = discovery(request)) return *answer;
    std::lock_guard lock(mutex);
    if (request.target.rfind(kList + "?", 0) != 0) return {404, "{}", ""};
    if (!is_watch(request)) {
      // Lists carry neither apiVersion nor kind on their items.
      json item = config_map("5", "listed");
      item.erase("apiVersion");
      item.erase("kind");
      return {200, json{{"metadata", {{"resourceVersion", "10"}}}, {"items", {item}}}.dump(), ""};
    }
    switch (++watches) {
      case 1:
        return {200,
                event("MODIFIED", config_map("11", "edited")) +
                    event("BOOKMARK", {{"kind", "ConfigMap"},
                                       {"apiVersion", "v1"},
                                       {"metadata", {{"resourceVersion", "12"}}}}),
                ""};
      case 2:
        return {200, event("ERROR", {{"kind", "Status"}, {"code", 410}, {"reason", "Expired"}}),
                ""};
      case 3:
        return {200, event("DELETED", config_map("14", "edited")), ""};
      default:
        return {200, "", ""};
    }
  });
  std::atomic<int> changes{0};
  std::vector<std::string> errors;
  ObjectWatch watch(
      access_to(server), {"", "v1", "ConfigMap", "flux-system", "flux"}, [&] { ++changes; },
      [&](const std::string& error) { errors.push_back(error); }, quick());
  // Counted where the server records them: the client counts a request
  // before the server has read it.
  auto listed_or_watched = [&] {
    std::vector<FakeRequest> seen;
    for (const FakeRequest& request : server.requests())
      if (request.target.rfind(kList, 0) == 0) seen.push_back(request);
    return seen;
  };
  REQUIRE(eventually([&] { return listed_or_watched().size() >= 6; }));
  CHECK(watch.requests() >= 6);

  std::vector<std::string> objects;
  for (const FakeRequest& request : listed_or_watched()) {
    CHECK(query_value(request.target, "fieldSelector") == "metadata.name%3Dflux");
    objects.push_back(is_watch(request) ? "watch@" + query_value(request.target, "resourceVersion")
                                        : "list");
    if (is_watch(request)) CHECK(query_value(request.target, "allowWatchBookmarks") == "true");
  }
  REQUIRE(objects.size() >= 6);
  // Watched from the list's version, then from the bookmark's; listed
  // again after 410 Gone; watched from the deletion's version.
  CHECK(std::vector<std::string>(objects.begin(), objects.begin() + 6) ==
        std::vector<std::string>{"list", "watch@10", "watch@12", "list", "watch@10", "watch@14"});
  CHECK(errors.empty());
  CHECK(watch.synced());
  CHECK_FALSE(watch.object());  // deleted
  CHECK(changes >= 4);          // listed, modified, listed again, deleted
}

TEST_CASE("watch: the object as the last event left it, with its apiVersion and kind") {
  std::atomic<bool> modified{false};
  FakeApiServer server([&](const FakeRequest& request) -> FakeResponse {
    if (auto answer = discovery(request)) return *answer;
    if (!is_watch(request)) return {200, R"({"metadata":{"resourceVersion":"3"},"items":[]})", ""};
    if (modified.exchange(true)) return {200, "", ""};
    return {200, event("ADDED", config_map("4", "new")), ""};
  });
  ObjectWatch watch(
      access_to(server), {"", "v1", "ConfigMap", "flux-system", "flux"}, [] {},
      [](const std::string&) {}, quick());
  REQUIRE(eventually([&] { return watch.object().has_value(); }));
  json object = *watch.object();
  CHECK(object["kind"] == "ConfigMap");
  CHECK(object["data"]["value"] == "new");
}

TEST_CASE("watch: errors are reported and retried with backoff, the kind's discovery redone") {
  std::atomic<int> lists{0};
  FakeApiServer server([&](const FakeRequest& request) -> FakeResponse {
    if (auto answer = discovery(request)) return *answer;
    if (is_watch(request)) return {200, "", ""};
    if (++lists <= 2)
      return {
          403,
          R"({"kind":"Status","reason":"Forbidden","message":"configmaps is forbidden","code":403})",
          ""};
    return {200, R"({"metadata":{"resourceVersion":"3"},"items":[]})", ""};
  });
  std::mutex mutex;
  std::vector<std::string> errors;
  ObjectWatch watch(
      access_to(server), {"", "v1", "ConfigMap", "flux-system", "flux"}, [] {},
      [&](const std::string& error) {
        std::lock_guard lock(mutex);
        errors.push_back(error);
      },
      quick());
  REQUIRE(eventually([&] { return watch.synced(); }));
  std::lock_guard lock(mutex);
  REQUIRE(errors.size() == 2);
  CHECK(errors[0] == "ConfigMap/flux-system/flux: forbidden: configmaps is forbidden");
  int discoveries = 0;
  for (const FakeRequest& request : server.requests()) discoveries += request.target == "/api";
  CHECK(discoveries == 3);  // once, then again after each failure
}

TEST_CASE("watch: destroying it ends a watch in progress at once") {
  std::mutex mutex;
  std::condition_variable released;
  bool release = false;
  std::atomic<bool> watching{false};
  FakeApiServer server([&](const FakeRequest& request) -> FakeResponse {
    if (auto answer = discovery(request)) return *answer;
    if (!is_watch(request)) return {200, R"({"metadata":{"resourceVersion":"3"},"items":[]})", ""};
    watching = true;
    // A quiet watch: nothing until the test is over (the server's own bound).
    std::unique_lock lock(mutex);
    released.wait_for(lock, std::chrono::seconds(60), [&] { return release; });
    return {200, "", ""};
  });
  {
    auto watch = std::make_unique<ObjectWatch>(
        access_to(server), fluxop::kube::ObjectKey{"", "v1", "ConfigMap", "flux-system", "flux"},
        [] {}, [](const std::string&) {}, quick());
    REQUIRE(eventually([&] { return watching.load(); }));
    auto started = std::chrono::steady_clock::now();
    watch.reset();
    // Well before the server answers (60 s): the request was cancelled.
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  }
  {
    std::lock_guard lock(mutex);
    release = true;
  }
  released.notify_all();
}
