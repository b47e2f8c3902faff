#include "core/daemon/endpoints.h"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/daemon/metrics.h"
#include "core/error.h"
#include "core/net/http.h"

using fluxop::daemon::EndpointHandlers;
using fluxop::daemon::EndpointServer;
using fluxop::net::HttpClient;
using fluxop::net::HttpOptions;
using fluxop::net::HttpRequest;
using fluxop::net::HttpResponse;

namespace {

// One request to the server on 127.0.0.1, without retries: a 500 is an answer here.
HttpResponse request(int port, const std::string& path, const std::string& method = "GET") {
  HttpOptions options;
  options.plain_http_allowed = [](std::string_view) { return true; };
  options.attempts = 1;
  options.connect_timeout = std::chrono::seconds(5);
  options.request_timeout = std::chrono::seconds(10);
  HttpClient client(options);
  HttpRequest request;
  request.method = method;
  request.url = "http://127.0.0.1:" + std::to_string(port) + path;
  return client.send(request);
}

// The message of the fluxop::Error constructing a server on `address` throws.
std::string construction_error(const std::string& flag, const std::string& address) {
  try {
    EndpointServer server(flag, address, {.metrics = [] { return std::string(); }});
  } catch (const fluxop::Error& error) {
    return error.what();
  }
  return "(no error)";
}

template <typename Function>
std::chrono::milliseconds time_taken(Function function) {
  auto start = std::chrono::steady_clock::now();
  function();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start);
}

}  // namespace

TEST_CASE("daemon endpoints: /metrics answers with the text exposition format") {
  fluxop::daemon::Metrics metrics;
  fluxop::daemon::InstanceInfo info;
  info.name = "flux";
  info.ns = "flux-system";
  metrics.set_instance(info);
  EndpointServer server("--metrics-addr", "127.0.0.1:0",
                        {.metrics = [&metrics] { return metrics.render(); }});
  REQUIRE(server.port() > 0);

  HttpResponse response = request(server.port(), "/metrics");
  CHECK(response.status == 200);
  CHECK(response.header("content-type") == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(response.body.find("# TYPE flux_instance_info gauge\n") != std::string::npos);
  CHECK(response.body.find("name=\"flux\"") != std::string::npos);

  HttpResponse head = request(server.port(), "/metrics", "HEAD");
  CHECK(head.status == 200);
  CHECK(head.body.empty());

  CHECK(request(server.port(), "/metrics?x=1").status == 200);
  CHECK(request(server.port(), "/metrics", "POST").status == 404);
  CHECK(request(server.port(), "/").status == 404);
  CHECK(request(server.port(), "/metrics/x").status == 404);
  CHECK(request(server.port(), "/healthz").status == 404);  // not asked for
  CHECK(request(server.port(), "/readyz").status == 404);
}

TEST_CASE("daemon endpoints: /healthz and /readyz follow their checks") {
  std::atomic<bool> healthy = true, ready = false;
  EndpointServer server(
      "--health-addr", "127.0.0.1:0",
      {.healthy = [&] { return healthy.load(); }, .ready = [&] { return ready.load(); }});

  HttpResponse response = request(server.port(), "/healthz");
  CHECK(response.status == 200);
  CHECK(response.body == "ok");
  CHECK(response.header("content-type") == "text/plain; charset=utf-8");
  response = request(server.port(), "/readyz");
  CHECK(response.status == 500);
  CHECK(response.body == "readyz check failed\n");

  ready = true;
  healthy = false;
  CHECK(request(server.port(), "/readyz").status == 200);
  CHECK(request(server.port(), "/readyz").body == "ok");
  CHECK(request(server.port(), "/healthz").status == 500);
  CHECK(request(server.port(), "/metrics").status == 404);  // not asked for
}

TEST_CASE("daemon endpoints: every interface, IPv4 included") {
  EndpointServer server("--health-addr", ":0", {.healthy = [] { return true; }});
  CHECK(request(server.port(), "/healthz").status == 200);
}

TEST_CASE("daemon endpoints: an address that does not parse is refused, naming the flag") {
  CHECK(construction_error("--metrics-addr", "nohost") ==
        "--metrics-addr: nohost: missing port in address");
  CHECK(construction_error("--health-addr", "1.2.3.4:99999") ==
        "--health-addr: 1.2.3.4:99999: invalid port \"99999\"");
  CHECK(construction_error("--health-addr", "127.0.0.1:") ==
        "--health-addr: 127.0.0.1:: invalid port \"\"");
  CHECK(construction_error("--health-addr", "127.0.0.1:http") ==
        "--health-addr: 127.0.0.1:http: invalid port \"http\"");
  CHECK(construction_error("--metrics-addr", "::1:8080") ==
        "--metrics-addr: ::1:8080: not HOST:PORT, [IPV6]:PORT or :PORT");
  // Not an address of this machine.
  CHECK(construction_error("--metrics-addr", "192.0.2.1:0") ==
        "--metrics-addr: 192.0.2.1:0: bind: Cannot assign requested address");
}

TEST_CASE("daemon endpoints: an address in use is refused") {
  EndpointServer first("--metrics-addr", "127.0.0.1:0", {.metrics = [] { return std::string(); }});
  std::string address = "127.0.0.1:" + std::to_string(first.port());
  CHECK(construction_error("--health-addr", address) ==
        "--health-addr: " + address + ": bind: Address already in use");
  CHECK(request(first.port(), "/metrics").status == 200);
}

TEST_CASE("daemon endpoints: destruction is prompt") {
  std::optional<EndpointServer> server(
      std::in_place, "--metrics-addr", "127.0.0.1:0",
      EndpointHandlers{.metrics = [] { return std::string("up 1\n"); }});
  std::chrono::milliseconds bound(500);
  int client = -1;
  SUBCASE("right after construction") {}
  SUBCASE("after requests") {
    for (int i = 0; i < 3; ++i) CHECK(request(server->port(), "/metrics").body == "up 1\n");
  }
  SUBCASE("with a client connected that sends nothing: within the server's timeout") {
    client = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(server->port()));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    bound = std::chrono::milliseconds(3000);
  }
  CHECK(time_taken([&] { server.reset(); }) < bound);
  if (client >= 0) close(client);
}

namespace {

// A blocking connection to the server on 127.0.0.1; reads give up after 10 s
// so that a server that never answers fails the test instead of hanging it.
int connect_to(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  timeval ten_seconds{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &ten_seconds, sizeof ten_seconds);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  return fd;
}

void send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t sent = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    REQUIRE(sent > 0);
    data.remove_prefix(static_cast<std::size_t>(sent));
  }
}

// Everything the server sends until it closes the connection.
std::string read_to_end(int fd) {
  std::string received;
  char buffer[4096];
  ssize_t got;
  while ((got = recv(fd, buffer, sizeof buffer, 0)) > 0) {
    received.append(buffer, static_cast<std::size_t>(got));
  }
  CHECK(got == 0);  // closed, not timed out or reset
  return received;
}

// The server's whole answer to `request`, sent as is.
std::string exchange(int port, std::string_view request) {
  int fd = connect_to(port);
  send_all(fd, request);
  std::string response = read_to_end(fd);
  close(fd);
  return response;
}

EndpointHandlers every_endpoint() {
  return {.metrics = [] { return std::string("up 1\n"); },
          .healthy = [] { return true; },
          .ready = [] { return true; }};
}

}  // namespace

TEST_CASE("daemon endpoints: the responses on the wire") {
  EndpointServer server("--metrics-addr", "127.0.0.1:0", every_endpoint());
  CHECK(exchange(server.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n") ==
        "HTTP/1.1 200 OK\r\nConnection: close\r\n"
        "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
        "Content-Length: 5\r\n\r\nup 1\n");
  // HEAD: the length the body would have, and no body.
  CHECK(exchange(server.port(), "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n") ==
        "HTTP/1.1 200 OK\r\nConnection: close\r\n"
        "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
        "Content-Length: 5\r\n\r\n");
  CHECK(exchange(server.port(), "GET /nowhere HTTP/1.1\r\n\r\n") ==
        "HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  // HTTP/1.0, and lines ended by a bare LF.
  CHECK(exchange(server.port(), "GET /healthz HTTP/1.0\n\n").ends_with("\r\n\r\nok"));
  CHECK(exchange(server.port(), "DELETE /readyz HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 "));
  for (const char* malformed : {"GET /metrics\r\n\r\n", "GET /metrics HTTP/2.0\r\n\r\n",
                                "GET  /metrics HTTP/1.1\r\n\r\n", "\r\n"}) {
    CAPTURE(malformed);
    CHECK(exchange(server.port(), malformed).starts_with("HTTP/1.1 400 Bad Request\r\n"));
  }
}

TEST_CASE("daemon endpoints: the pages answer every other path, with their headers") {
  std::vector<std::string> targets, authorizations;
  std::mutex mutex;
  EndpointServer server(
      "--status-addr", "127.0.0.1:0", {.pages = [&](const fluxop::daemon::PageRequest& request) {
        std::lock_guard lock(mutex);
        targets.emplace_back(request.target);
        authorizations.emplace_back(request.authorization);
        return fluxop::daemon::HttpResponse{request.target == "/" ? 200 : 404,
                                            "text/html; charset=utf-8",
                                            {{"X-Content-Type-Options", "nosniff"}},
                                            "<p>page</p>"};
      }});
  CHECK(exchange(server.port(), "GET /resources?state=Failed&q=a+b HTTP/1.1\r\n\r\n") ==
        "HTTP/1.1 404 Not Found\r\nConnection: close\r\n"
        "Content-Type: text/html; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n"
        "Content-Length: 11\r\n\r\n<p>page</p>");
  // The Authorization header, whatever its name's case, its value trimmed.
  CHECK(exchange(server.port(),
                 "HEAD / HTTP/1.1\r\nHost: x\r\nauthoRIZATION: \t Bearer abc \r\n"
                 "X-Authorization: no\r\n\r\n")
            .ends_with("Content-Length: 11\r\n\r\n"));
  // Another method reaches no page.
  CHECK(exchange(server.port(), "POST / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 "));
  // The metrics and probes are not served beside them.
  CHECK(exchange(server.port(), "GET /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 "));
  std::lock_guard lock(mutex);
  CHECK(targets == std::vector<std::string>{"/resources?state=Failed&q=a+b", "/", "/metrics"});
  CHECK(authorizations == std::vector<std::string>{"", "Bearer abc", ""});
}

TEST_CASE("daemon endpoints: which addresses are loopback ones") {
  using fluxop::daemon::loopback_address;
  for (const char* loopback : {"127.0.0.1:9090", "127.1.2.3:0", "[::1]:9090", "localhost:9090"}) {
    CAPTURE(loopback);
    CHECK(loopback_address(loopback));
  }
  for (const char* other :
       {":9090", "0.0.0.0:9090", "[::]:9090", "10.0.0.1:9090", "example.com:9090",
        "[::ffff:10.0.0.1]:9090", "127.0.0.1", "127.0.0.1:x"}) {
    CAPTURE(other);
    CHECK_FALSE(loopback_address(other));
  }
}

TEST_CASE("daemon endpoints: a request split across many small writes") {
  EndpointServer server("--metrics-addr", "127.0.0.1:0", every_endpoint());
  int fd = connect_to(server.port());
  for (char byte : std::string_view("GET /readyz HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n")) {
    send_all(fd, std::string_view(&byte, 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(read_to_end(fd).ends_with("\r\n\r\nok"));
  close(fd);
}

TEST_CASE("daemon endpoints: a request's head beyond 8 KiB is refused") {
  EndpointServer server("--metrics-addr", "127.0.0.1:0", every_endpoint());
  std::string request = "GET /metrics HTTP/1.1\r\n";
  while (request.size() <= 8 * 1024) request += "X-Filler: " + std::string(100, 'x') + "\r\n";
  CHECK(exchange(server.port(), request + "\r\n")
            .starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
  // Just within the bound is fine.
  request = "GET /metrics HTTP/1.1\r\nX-Filler: ";
  request += std::string(8 * 1024 - request.size() - 4, 'x') + "\r\n\r\n";
  CHECK(request.size() == 8 * 1024);
  CHECK(exchange(server.port(), request).ends_with("\r\n\r\nup 1\n"));
}

TEST_CASE("daemon endpoints: a request's body is read and dropped") {
  EndpointServer server("--metrics-addr", "127.0.0.1:0", every_endpoint());
  std::string body(32 * 1024, 'b');
  CHECK(exchange(server.port(), "POST /metrics HTTP/1.1\r\nContent-Length: " +
                                    std::to_string(body.size()) + "\r\n\r\n" + body)
            .starts_with("HTTP/1.1 404 Not Found\r\n"));
  CHECK(request(server.port(), "/metrics", "POST").status == 404);
}

TEST_CASE("daemon endpoints: a handler that throws is a 500") {
  EndpointServer server("--metrics-addr", "127.0.0.1:0",
                        {.metrics = []() -> std::string { throw std::runtime_error("broken"); }});
  CHECK(request(server.port(), "/metrics").status == 500);
  CHECK(request(server.port(), "/healthz").status == 404);
}

TEST_CASE("daemon endpoints: a client gone in the middle of a response harms nothing") {
  // SIGPIPE's default disposition, which would end the process, for this
  // test's length.
  struct sigaction default_action {
  }, previous{};
  default_action.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &default_action, &previous);
  EndpointServer server("--metrics-addr", "127.0.0.1:0",
                        {.metrics = [] { return std::string(8 << 20, 'm'); }});
  for (int i = 0; i < 3; ++i) {
    int fd = connect_to(server.port());
    send_all(fd, "GET /metrics HTTP/1.1\r\n\r\n");
    char byte;
    CHECK(recv(fd, &byte, 1, 0) == 1);  // the server is sending
    linger reset{1, 0};                 // close() resets the connection
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    close(fd);
  }
  CHECK(exchange(server.port(), "GET /metrics HTTP/1.1\r\n\r\n")
            .ends_with(std::string(8 << 20, 'm')));
  sigaction(SIGPIPE, &previous, nullptr);
}

TEST_CASE("daemon endpoints: slow and silent clients delay no other and are dropped") {
  EndpointServer server("--health-addr", "127.0.0.1:0", every_endpoint());
  auto connected = std::chrono::steady_clock::now();
  std::vector<int> silent;
  for (int i = 0; i < 8; ++i) silent.push_back(connect_to(server.port()));
  // One sends its request a byte a second: never whole within the bound.
  std::thread trickling([port = server.port()] {
    int fd = connect_to(port);
    std::string_view request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    for (std::size_t sent = 0; sent < 10; ++sent) {
      if (send(fd, request.data() + sent, 1, MSG_NOSIGNAL) != 1) break;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    char byte;
    CHECK(recv(fd, &byte, 1, 0) <= 0);  // dropped, with no answer
    close(fd);
  });

  // Meanwhile, concurrent clients are answered at once.
  std::atomic<int> answered = 0;
  std::vector<std::thread> clients;
  auto answering = time_taken([&] {
    for (int i = 0; i < 8; ++i) {
      clients.emplace_back([&, port = server.port()] {
        for (int j = 0; j < 10; ++j) {
          if (request(port, j % 2 ? "/healthz" : "/readyz").body == "ok") ++answered;
        }
      });
    }
    for (std::thread& client : clients) client.join();
  });
  CHECK(answered == 80);
  CHECK(answering < std::chrono::milliseconds(3000));

  // The silent ones are closed after the server's 5 s, no answer sent.
  for (int fd : silent) {
    CHECK(read_to_end(fd).empty());
    close(fd);
  }
  auto dropped_after = std::chrono::steady_clock::now() - connected;
  CHECK(dropped_after >= std::chrono::milliseconds(4500));
  CHECK(dropped_after < std::chrono::milliseconds(7000));
  trickling.join();
}

TEST_CASE("daemon endpoints: /healthz answers within 1 s while 300 slow clients are connected") {
  EndpointServer server("--health-addr", "127.0.0.1:0", every_endpoint());
  std::vector<int> slow;
  for (int i = 0; i < 300; ++i) {
    slow.push_back(connect_to(server.port()));
    // Half silent, half with a request begun and never ended.
    if (i % 2) send_all(slow.back(), "GET /heal");
  }
  HttpResponse answer;
  auto taken = time_taken([&] { answer = request(server.port(), "/healthz"); });
  CHECK(answer.body == "ok");
  CHECK(taken < std::chrono::milliseconds(1000));
  for (int fd : slow) close(fd);
}
