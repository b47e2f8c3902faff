// The HTTP client's bounds against servers that accept and then misbehave:
// never answer, trickle, or stream slowly but steadily (a watch).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/net/http.h"
#include "misbehaving_server.h"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using fluxop::testing::MisbehavingServer;
using fluxop::testing::pause;
using fluxop::testing::send_text;

void never_answer(int, const std::atomic<bool>& stopping) {
  while (pause(100ms, stopping)) {
  }
}

// Headers of a body of `size` bytes, then the body a byte every `every`.
MisbehavingServer::Behaviour trickle(int size, std::chrono::milliseconds every) {
  return [size, every](int fd, const std::atomic<bool>& stopping) {
    send_text(fd, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(size) + "\r\n\r\n");
    for (int sent = 0; sent < size && pause(every, stopping); ++sent) send_text(fd, "x");
  };
}

fluxop::net::HttpOptions plain_http() {
  fluxop::net::HttpOptions options;
  options.plain_http_allowed = [](std::string_view) { return true; };
  options.backoff = 10ms;
  return options;
}

fluxop::net::HttpRequest get(const std::string& url) {
  fluxop::net::HttpRequest request;
  request.url = url;
  return request;
}

struct Failure {
  std::string message;
  Clock::duration took;
  int attempts = 0;
};

// How `request` fails with a client of `options`.
Failure failure(const fluxop::net::HttpOptions& options, const fluxop::net::HttpRequest& request) {
  fluxop::net::HttpClient client(options);
  auto started = Clock::now();
  try {
    client.send(request);
  } catch (const fluxop::Error& e) {
    return {e.what(), Clock::now() - started, client.requests_sent()};
  }
  FAIL("no error");
  return {};
}

}  // namespace

TEST_CASE("http: a server that never answers ends the request at its timeout, retries included") {
  MisbehavingServer server(never_answer);
  fluxop::net::HttpOptions options = plain_http();
  options.request_timeout = 1500ms;
  Failure failed = failure(options, get(server.url("/v2/")));
  CHECK(failed.message == server.url("/v2/") + ": no response within 1.5s");
  CHECK(failed.took >= 1400ms);
  CHECK(failed.took < 5s);
  CHECK(failed.attempts == 1);  // no time was left to retry
}

TEST_CASE("http: a trickle is ended by the request's timeout once it has answered") {
  MisbehavingServer server(trickle(1000, 1000ms));
  fluxop::net::HttpOptions options = plain_http();
  options.request_timeout = 1s;
  Failure failed = failure(options, get(server.url("/v2/flux/blobs/x")));
  CHECK(failed.message == server.url("/v2/flux/blobs/x") + ": response not complete within 1s");
  CHECK(failed.took < 5s);
}

TEST_CASE(
    "http: without a request timeout, a stall still ends the request, a bounded number "
    "of times") {
  MisbehavingServer server(trickle(1000, 1000ms));
  fluxop::net::HttpOptions options = plain_http();
  options.request_timeout = 0ms;
  options.stall = {.bytes_per_second = 100, .time = 1s};
  options.attempts = 2;
  Failure failed = failure(options, get(server.url("/v2/flux/blobs/x")));
  CHECK(failed.message == server.url("/v2/flux/blobs/x") +
                              ": stalled: less than 100 bytes/s for 1s (after 2 attempts)");
  CHECK(failed.took < 15s);
  CHECK(failed.attempts == 2);
}

TEST_CASE("http: a stream outlives the client's request timeout, a dead stream does not") {
  fluxop::net::HttpOptions options = plain_http();
  options.request_timeout = 300ms;
  options.attempts = 1;
  auto stream = [](const std::string& url) {
    fluxop::net::HttpRequest request = get(url);
    request.timeout = 10s;
    request.stall = fluxop::net::StallBound{.bytes_per_second = 1, .time = 2s};
    return request;
  };

  SUBCASE("steady: a byte every 100 ms for 1.5 s") {
    MisbehavingServer server(trickle(15, 100ms));
    fluxop::net::HttpClient client(options);
    fluxop::net::HttpResponse response = client.send(stream(server.url("/apis/x/watch")));
    CHECK(response.status == 200);
    CHECK(response.body == std::string(15, 'x'));
  }
  SUBCASE("dead: headers, then nothing") {
    MisbehavingServer server(trickle(15, 60s));
    Failure failed = failure(options, stream(server.url("/apis/x/watch")));
    CHECK(failed.message == server.url("/apis/x/watch") + ": stalled: nothing received for 2s");
    CHECK(failed.took < 8s);
  }
}

TEST_CASE("http: a request's time starts with its first attempt, not while it is queued") {
  // Each answered after 600 ms: the third of three sent one at a time
  // starts 1.2 s after send_all, beyond the timeout had it started then.
  MisbehavingServer server([](int fd, const std::atomic<bool>& stopping) {
    if (pause(600ms, stopping))
      send_text(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
  });
  fluxop::net::HttpOptions options = plain_http();
  options.request_timeout = 1s;
  options.attempts = 1;
  fluxop::net::HttpClient client(options);
  std::vector<fluxop::net::HttpRequest> requests(3, get(server.url("/api")));
  for (const fluxop::net::HttpResponse& response : client.send_all(requests, 1))
    CHECK(response.status == 200);
}

TEST_CASE("http: a server that does not accept the connection fails at the connect timeout") {
  // A listener whose backlog is full and that never accepts: the kernel
  // drops further handshakes, as a host that is down or filtered does.
  int port = 0;
  int listener = fluxop::testing::listen_on_loopback(port);
  listen(listener, 0);
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/v2/";
  // Connections that fill it, never accepted (non-blocking: the last ones
  // stay unanswered).
  std::vector<int> queued;
  for (int i = 0; i < 4; ++i) {
    queued.push_back(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    connect(queued.back(), reinterpret_cast<sockaddr*>(&address), sizeof address);
  }
  fluxop::net::HttpOptions options = plain_http();
  options.connect_timeout = 500ms;
  options.attempts = 1;
  SUBCASE("its own bound") {
    Failure failed = failure(options, get(url));
    CHECK(failed.message == url + ": no connection within 500ms");
    CHECK(failed.took < 5s);
  }
  SUBCASE("the request's, when shorter") {
    options.request_timeout = 300ms;
    Failure failed = failure(options, get(url));
    CHECK(failed.message == url + ": no connection within 300ms");
    CHECK(failed.took < 5s);
  }
  for (int fd : queued) close(fd);
  close(listener);
}

// The time curl took to fail is left out: a retry that fails alike says the
// same (an Event is counted, not written again for each).
TEST_CASE("http: a refused connection is described without the time it took") {
  int port = 0;
  close(fluxop::testing::listen_on_loopback(port));  // nothing listens there now
  fluxop::net::HttpOptions options = plain_http();
  options.attempts = 1;
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/v2/";
  CHECK(failure(options, get(url)).message == url + ": Failed to connect to 127.0.0.1 port " +
                                                  std::to_string(port) +
                                                  ": Couldn't connect to server");
}

namespace {

fluxop::net::HttpRequest patch(const std::string& url, std::string body) {
  fluxop::net::HttpRequest request;
  request.method = "PATCH";
  request.url = url;
  request.headers = {"Content-Type: application/merge-patch+json"};
  request.body = std::move(body);
  return request;
}

// Reads from `fd` until `text` has arrived (or the peer stopped sending).
void read_until(int fd, const std::string& text) {
  std::string seen;
  char buffer[4096];
  while (seen.find(text) == std::string::npos) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) return;
    seen.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace

TEST_CASE("http: a body is sent again whole when the connection it was sent on died") {
  // The first connection answers one request and keeps alive, then reads
  // the second and closes without an answer: libcurl sends it again on a
  // fresh connection, which needs the body rewound.
  std::atomic<int> connections{0};
  MisbehavingServer server([&](int fd, const std::atomic<bool>&) {
    int connection = ++connections;
    send_text(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    if (connection == 1) read_until(fd, "\"second\"");
  });
  fluxop::net::HttpClient client(plain_http());
  CHECK(client.send(patch(server.url("/first"), R"({"first":1})")).status == 200);
  fluxop::net::HttpResponse second = client.send(patch(server.url("/second"), R"({"second":2})"));
  CHECK(second.status == 200);
  CHECK(second.body == "ok");
  CHECK(connections == 2);
  std::vector<std::string> requests = server.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[1].find("PATCH /second") != std::string::npos);
}

TEST_CASE("http: a batch meeting an outage probes it with at most its requests in flight") {
  // Every connection is closed unanswered, as an API server going down does.
  MisbehavingServer server([](int, const std::atomic<bool>&) {});
  fluxop::net::HttpOptions options = plain_http();
  options.backoff = 50ms;
  fluxop::net::HttpClient client(options);
  std::vector<fluxop::net::HttpRequest> requests;
  for (int i = 0; i < 200; ++i) {
    requests.push_back(patch(server.url("/objects/" + std::to_string(i)), R"({})"));
    requests.back().retry_for = 1s;
  }
  CHECK_THROWS_AS(client.send_all(requests, 8), fluxop::Error);
  // Each time the batch tries again, 8 connections; a few times in its
  // retry window, not each of the 200 requests in turn.
  INFO("requests sent: " << client.requests_sent());
  CHECK(client.requests_sent() <= 8 * 8);
  CHECK(client.requests_sent() >= 8);
}
