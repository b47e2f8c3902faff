#include "core/daemon/endpoints.h"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

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
