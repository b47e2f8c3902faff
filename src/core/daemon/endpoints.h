// The daemon's HTTP endpoints, as the Flux Operator serves them: Prometheus
// metrics on one address (--metrics-addr), the liveness and readiness probes
// on another (--health-addr). Plain HTTP; GET and HEAD.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace fluxop::daemon {

// What answers each endpoint; an endpoint whose function is empty is not
// served (404). Called on the server's threads, possibly concurrently. The
// `{}`s let a designated initializer name only some of them without
// -Wmissing-field-initializers.
struct EndpointHandlers {
  std::function<std::string()> metrics{};  // the body of GET /metrics
  std::function<bool()> healthy{};         // GET /healthz: 200 "ok" when true, else 500
  std::function<bool()> ready{};           // GET /readyz: 200 "ok" when true, else 500
};

// Serves the handlers on `address` ("HOST:PORT", "[IPV6]:PORT", or ":PORT"
// for every interface, IPv4 and IPv6; port 0 for any free port) in threads
// of its own, from construction (connections are accepted as soon as the
// constructor returns) until destruction. Anything but the endpoints: 404.
// Constructing one ignores SIGPIPE in the whole process (httplib does: its
// writes to a closed connection would raise it); children spawned afterwards
// inherit that unless their spawn restores it.
class EndpointServer {
 public:
  // Throws fluxop::Error, "<flag>: <address>: <why>", when the address does
  // not parse or cannot be listened on (`flag` names where it came from,
  // e.g. "--metrics-addr").
  EndpointServer(std::string flag, std::string address, EndpointHandlers handlers);
  // Stops listening and joins the threads: promptly, unless a client is in
  // the middle of a request (then at most about a second, the timeouts).
  ~EndpointServer();
  EndpointServer(const EndpointServer&) = delete;
  EndpointServer& operator=(const EndpointServer&) = delete;

  // The port listened on (the one chosen when 0 was asked).
  int port() const;

 private:
  // Keeps httplib.h, and the OpenSSL headers it brings, out of this header.
  struct Server;
  std::unique_ptr<Server> server_;
};

}  // namespace fluxop::daemon
