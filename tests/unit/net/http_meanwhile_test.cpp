// HttpRequest::meanwhile: local work run while the server answers (a warm
// build checks its cached entry while the registry resolves the tag).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "core/error.h"
#include "core/net/http.h"
#include "misbehaving_server.h"

namespace {

using namespace std::chrono_literals;
using fluxop::testing::MisbehavingServer;
using fluxop::testing::pause;
using fluxop::testing::send_text;

fluxop::net::HttpOptions plain_http() {
  fluxop::net::HttpOptions options;
  options.plain_http_allowed = [](std::string_view) { return true; };
  options.backoff = 10ms;
  return options;
}

// Waits, within a bound, until `done` holds.
template <typename Condition>
bool wait_until(Condition done, std::chrono::seconds bound = 10s) {
  for (auto end = std::chrono::steady_clock::now() + bound; !done();) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

const std::string kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

TEST_CASE("http: meanwhile runs once the request was sent, while the server holds its answer") {
  // The server answers only once meanwhile has run (or after its bound): a
  // client that ran it after the answer, or not at all, is found out.
  std::atomic<bool> ran{false};
  std::atomic<bool> answered_after{false};
  MisbehavingServer server([&](int fd, const std::atomic<bool>& stopping) {
    wait_until([&] { return ran.load() || stopping.load(); });
    answered_after = ran.load();
    send_text(fd, kOk);
  });
  fluxop::net::HttpClient client(plain_http());
  fluxop::net::HttpRequest request;
  request.url = server.url("/v2/");
  int runs = 0;
  bool request_was_there = false;
  request.meanwhile = [&] {
    ++runs;
    request_was_there = wait_until([&] { return server.requests().size() == 1; });
    ran = true;
  };
  fluxop::net::HttpResponse response = client.send(request);
  CHECK(response.status == 200);
  CHECK(response.body == "ok");
  CHECK(runs == 1);
  CHECK(request_was_there);
  CHECK(answered_after);
}

TEST_CASE("http: meanwhile runs once however often the request is tried") {
  // The first attempt's answer waits for it, as above; the retries' do not.
  std::atomic<bool> ran{false};
  std::atomic<int> connections{0};
  MisbehavingServer server([&](int fd, const std::atomic<bool>& stopping) {
    int connection = ++connections;
    if (connection == 1) wait_until([&] { return ran.load() || stopping.load(); });
    send_text(
        fd, connection < 3 ? "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n" : kOk);
  });
  fluxop::net::HttpClient client(plain_http());
  fluxop::net::HttpRequest request;
  request.url = server.url("/v2/");
  int runs = 0;
  request.meanwhile = [&] {
    ++runs;
    ran = true;
  };
  CHECK(client.send(request).status == 200);
  CHECK(connections == 3);
  CHECK(runs == 1);
}

TEST_CASE("http: what meanwhile throws ends the request") {
  MisbehavingServer server([](int fd, const std::atomic<bool>& stopping) {
    if (pause(10s, stopping)) send_text(fd, kOk);
  });
  fluxop::net::HttpClient client(plain_http());
  fluxop::net::HttpRequest request;
  request.url = server.url("/v2/");
  request.meanwhile = [] { throw fluxop::Error("the local work failed"); };
  auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(client.send(request), "the local work failed", fluxop::Error);
  CHECK(std::chrono::steady_clock::now() - started < 5s);
}

}  // namespace
