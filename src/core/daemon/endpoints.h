// The daemon's HTTP endpoints, as the Flux Operator serves them: Prometheus
// metrics on one address (--metrics-addr), the liveness and readiness probes
// on another (--health-addr), the status pages on a third (--status-addr).
// Plain HTTP/1.1 (and 1.0), one request per connection; GET and HEAD.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fluxop::daemon {

// What answers each endpoint; an endpoint whose function is empty is not
// served (404). Called on the server's thread, possibly concurrently with
// any other (another server's, say). The
// `{}`s let a designated initializer name only some of them without
// -Wmissing-field-initializers.
struct HttpResponse {
  int status = 200;
  std::string content_type;  // none when empty
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// A request of the status pages: its target (path and query) and its
// Authorization header's value (empty without one).
struct PageRequest {
  std::string_view target;
  std::string_view authorization;
};

struct EndpointHandlers {
  std::function<std::string()> metrics{};  // the body of GET /metrics
  std::function<bool()> healthy{};         // GET /healthz: 200 "ok" when true, else 500
  std::function<bool()> ready{};           // GET /readyz: 200 "ok" when true, else 500
  // GET of any path but those above: the status pages.
  std::function<HttpResponse(const PageRequest& request)> pages{};
};

// Whether `address` (HOST:PORT, as the flags take it) listens on a loopback
// interface only: 127.0.0.0/8, ::1 or localhost. ":PORT" is every interface.
bool loopback_address(std::string_view address);

// Serves the handlers on `address` ("HOST:PORT", "[IPV6]:PORT", or ":PORT"
// for every interface, IPv4 and IPv6; port 0 for any free port) in a thread
// of its own, from construction (connections are accepted as soon as the
// constructor returns) until destruction. Anything but the endpoints (or
// the pages, when served): 404.
// A request's line and headers may take 8 KiB (else 431), and a client 5
// seconds to send it and read the response (else it is dropped); a client
// that is slow or silent delays no other. At most 256 connections are served
// at once: a new one takes the place of the oldest still sending its
// request, so that /healthz answers however many slow clients are
// connected. The process's SIGPIPE disposition
// is left alone: a write to a connection the client closed fails with EPIPE
// instead (MSG_NOSIGNAL).
class EndpointServer {
 public:
  // Throws fluxop::Error, "<flag>: <address>: <why>", when the address does
  // not parse or cannot be listened on (`flag` names where it came from,
  // e.g. "--metrics-addr").
  EndpointServer(std::string flag, std::string address, EndpointHandlers handlers);
  // Stops listening, closes the connections and joins the thread: promptly,
  // whatever the clients are doing.
  ~EndpointServer();
  EndpointServer(const EndpointServer&) = delete;
  EndpointServer& operator=(const EndpointServer&) = delete;

  // The port listened on (the one chosen when 0 was asked).
  int port() const;

 private:
  // Keeps the socket and poll loop's workings out of this header.
  struct Server;
  std::unique_ptr<Server> server_;
};

}  // namespace fluxop::daemon
