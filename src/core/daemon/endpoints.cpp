#include "core/daemon/endpoints.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <list>
#include <string_view>
#include <thread>
#include <vector>

#include "core/ascii.h"
#include "core/error.h"

namespace fluxop::daemon {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr std::string_view kProbeContentType = "text/plain; charset=utf-8";

// Probes and scrapes send their request at once and read the answer at once:
// a client that has not done both this long after connecting is dropped.
constexpr auto kClientTimeout = std::chrono::seconds(5);
// The request line and headers; a longer head is answered 431.
constexpr std::size_t kMaxRequestHead = 8 * 1024;
// Connections served at once (those answered count while they drain). A
// newcomer beyond them takes the place of the oldest still sending its
// request: hundreds of slow clients would otherwise hold every place for
// kClientTimeout each, while the kubelet's probe waits in the listen backlog
// behind them and fails.
constexpr std::size_t kMaxConnections = 256;
constexpr std::size_t kAcceptsPerRound = 1024;
// After the response, what the client still sends (a body, pipelined
// requests) is read and dropped until it closes, so that our close does not
// reset the connection before the client has read the response: this much
// and this long at most.
constexpr std::size_t kMaxDiscarded = 64 * 1024;
constexpr auto kDrainTimeout = std::chrono::seconds(1);
// When accept() fails for want of descriptors or memory, the listening socket
// stays readable: it is left alone this long rather than polled in a spin.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

struct ListenAddress {
  std::string host;  // empty for every interface
  std::string port;
};

// Why `address` is not one in the syntax of Go's net.Listen, which the Flux
// Operator's flags take; empty when it is one, `parsed` then set.
std::string parse_address(std::string_view address, ListenAddress& parsed) {
  std::size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return "missing port in address";
  std::string_view host = address.substr(0, colon);
  std::string_view port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find_first_of("[]:") != std::string_view::npos) {
    return "not HOST:PORT, [IPV6]:PORT or :PORT";
  }
  unsigned number = 0;
  auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (port.empty() || error != std::errc() || end != port.data() + port.size() || number > 65535) {
    return "invalid port \"" + std::string(port) + "\"";
  }
  parsed = {std::string(host), std::string(port)};
  return {};
}

// A non-blocking socket listening on the address, or -1 and `why` set.
int listen_on(const ListenAddress& address, std::string& why) {
  // Every interface is IPv6's wildcard, which takes IPv4 too (dual stack),
  // as Go listens; IPv4's where the kernel has no IPv6.
  std::vector<std::string> hosts{address.host};
  if (address.host.empty()) hosts = {"::", "0.0.0.0"};
  for (const std::string& host : hosts) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (int status = getaddrinfo(host.c_str(), address.port.c_str(), &hints, &found)) {
      why = gai_strerror(status);
      continue;
    }
    std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, freeaddrinfo);
    for (addrinfo* candidate = found; candidate; candidate = candidate->ai_next) {
      int fd = socket(candidate->ai_family, candidate->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                      candidate->ai_protocol);
      if (fd < 0) {
        why = std::string("socket: ") + std::strerror(errno);
        continue;
      }
      int on = 1, off = 0;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
      if (candidate->ai_family == AF_INET6) {
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
      }
      if (bind(fd, candidate->ai_addr, candidate->ai_addrlen) != 0) {
        why = std::string("bind: ") + std::strerror(errno);
      } else if (listen(fd, SOMAXCONN) != 0) {
        why = std::string("listen: ") + std::strerror(errno);
      } else {
        return fd;
      }
      close(fd);
    }
  }
  return -1;
}

int local_port(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
}

using Response = HttpResponse;

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Internal Server Error";
  }
}

// The response on the wire: the body left out for a HEAD, its length not.
// Every connection serves one request: an idle keep-alive connection would
// only hold a descriptor.
std::string serialize(const Response& response, bool with_body) {
  std::string wire = "HTTP/1.1 " + std::to_string(response.status) + " ";
  wire += reason_phrase(response.status);
  wire += "\r\nConnection: close\r\n";
  if (!response.content_type.empty()) {
    wire += "Content-Type: ";
    wire += response.content_type;
    wire += "\r\n";
  }
  for (const auto& [name, value] : response.headers) wire += name + ": " + value + "\r\n";
  wire += "Content-Length: " + std::to_string(response.body.size()) + "\r\n\r\n";
  if (with_body) wire += response.body;
  return wire;
}

// Where the request's head (request line and headers) ends in `input`: past
// its empty line, or npos while that has not come. Lines end in CRLF, or in a
// bare LF, which RFC 9112 lets a server take too.
std::size_t head_end(std::string_view input) {
  for (std::size_t start = 0;;) {
    std::size_t newline = input.find('\n', start);
    if (newline == std::string_view::npos) return newline;
    std::size_t length = newline - start;
    if (length == 0 || (length == 1 && input[start] == '\r')) return newline + 1;
    start = newline + 1;
  }
}

// The line of `head` starting at `start`, without its CR LF or LF.
std::string_view line_at(std::string_view head, std::size_t start) {
  std::string_view line = head.substr(start, head.find('\n', start) - start);
  if (line.ends_with('\r')) line.remove_suffix(1);
  return line;
}

// The value of the first header called `name` (in lower case; a header's
// name is in any case), its surrounding spaces and tabs left out; empty
// when there is none.
std::string_view header_value(std::string_view head, std::string_view name) {
  for (std::size_t start = head.find('\n'); start != std::string_view::npos;
       start = head.find('\n', start)) {
    std::string_view line = line_at(head, ++start);
    std::size_t colon = line.find(':');
    if (colon != name.size() || lowercase(line.substr(0, colon)) != name) continue;
    std::string_view value = line.substr(colon + 1);
    std::size_t first = value.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    return value.substr(first, value.find_last_not_of(" \t") - first + 1);
  }
  return {};
}

// A probe's answer: "ok", or a 500 and "<name> check failed", in the words
// of controller-runtime's healthz handler.
Response probe(std::string_view name, const std::function<bool()>& check) {
  if (check()) return {200, std::string(kProbeContentType), {}, "ok"};
  return {500, std::string(kProbeContentType), {}, std::string(name) + " check failed\n"};
}

// One client's connection, through its one request and response.
struct Connection {
  enum class Phase { reading, writing, draining };

  int fd;
  Clock::time_point deadline;
  Phase phase = Phase::reading;
  bool done = false;  // to be closed
  std::string input;  // the request's head so far
  std::string output;
  std::size_t sent = 0;
  std::size_t discarded = 0;

  Connection(int accepted, Clock::time_point now) : fd(accepted), deadline(now + kClientTimeout) {}
  ~Connection() { close(fd); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
};

}  // namespace

// One thread polls the listening socket and every connection, all
// non-blocking: a client that is slow, silent or gone holds a descriptor
// until its timeout, never the thread, so that probes are answered whatever
// other clients do.
struct EndpointServer::Server {
  EndpointHandlers handlers;
  int listener = -1;
  int stop_event = -1;  // an eventfd: readable once the destructor wants the thread to end
  std::thread thread;

  ~Server() {
    if (listener >= 0) close(listener);
    if (stop_event >= 0) close(stop_event);
  }

  void serve();
  void accept_clients(std::list<Connection>& connections, Clock::time_point now,
                      Clock::time_point& accept_paused_until) const;
  void progress(Connection& connection, Clock::time_point now) const;
  void read_request(Connection& connection, Clock::time_point now) const;
  static void write_response(Connection& connection, Clock::time_point now);
  static void drain(Connection& connection);
  Response answer(std::string_view head, bool& head_only) const;
};

void EndpointServer::Server::serve() {
  std::list<Connection> connections;  // their addresses stay put as others come and go
  std::vector<pollfd> polled;
  Clock::time_point accept_paused_until;
  for (;;) {
    Clock::time_point now = Clock::now();
    bool accepting = now >= accept_paused_until;
    // A negative descriptor is one poll() skips.
    polled = {{stop_event, POLLIN, 0}, {accepting ? listener : -1, POLLIN, 0}};
    Clock::time_point wake = accepting ? Clock::time_point::max() : accept_paused_until;
    for (const Connection& connection : connections) {
      short events = connection.phase == Connection::Phase::writing ? POLLOUT : POLLIN;
      polled.push_back({connection.fd, events, 0});
      wake = std::min(wake, connection.deadline);
    }
    int timeout = -1;
    if (wake != Clock::time_point::max()) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(wake - now);
      timeout = static_cast<int>(std::max<std::int64_t>(left.count(), 0));
    }
    if (poll(polled.data(), polled.size(), timeout) < 0) continue;  // EINTR
    if (polled[0].revents) return;

    now = Clock::now();
    auto ready = polled.begin() + 2;
    for (Connection& connection : connections) {
      if ((ready++)->revents) progress(connection, now);
    }
    connections.remove_if([now](const Connection& connection) {
      return connection.done || now >= connection.deadline;
    });
    if (polled[1].revents) accept_clients(connections, now, accept_paused_until);
  }
}

void EndpointServer::Server::accept_clients(std::list<Connection>& connections,
                                            Clock::time_point now,
                                            Clock::time_point& accept_paused_until) const {
  // A bound per round, so that a storm of connections does not keep the
  // thread from the clients it has.
  for (std::size_t accepted = 0; accepted < kAcceptsPerRound; ++accepted) {
    int fd = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) accept_paused_until = now + kAcceptBackoff;
      return;
    }
    if (connections.size() >= kMaxConnections) {
      auto reading =
          std::find_if(connections.begin(), connections.end(), [](const Connection& connection) {
            return connection.phase == Connection::Phase::reading;
          });
      connections.erase(reading != connections.end() ? reading : connections.begin());
    }
    connections.emplace_back(fd, now);
    // A probe sends its request with the connection: answered now, it
    // cannot be the oldest to make room for the next newcomers.
    read_request(connections.back(), now);
  }
}

void EndpointServer::Server::progress(Connection& connection, Clock::time_point now) const {
  switch (connection.phase) {
    case Connection::Phase::reading:
      return read_request(connection, now);
    case Connection::Phase::writing:
      return write_response(connection, now);
    case Connection::Phase::draining:
      return drain(connection);
  }
}

void EndpointServer::Server::read_request(Connection& connection, Clock::time_point now) const {
  std::string& input = connection.input;
  std::size_t had = input.size();
  input.resize(kMaxRequestHead);
  ssize_t got = recv(connection.fd, input.data() + had, kMaxRequestHead - had, 0);
  input.resize(had + static_cast<std::size_t>(std::max<ssize_t>(got, 0)));
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (got <= 0) {  // gone before its request was whole
    connection.done = true;
    return;
  }
  Response response;
  bool head_only = false;
  if (std::size_t end = head_end(input); end != std::string::npos) {
    response = answer(std::string_view(input.data(), end), head_only);
  } else if (input.size() == kMaxRequestHead) {
    response = {431, {}, {}, {}};
  } else {
    return;
  }
  connection.output = serialize(response, !head_only);
  connection.phase = Connection::Phase::writing;
  write_response(connection, now);  // at once: a response usually fits the socket's buffer
}

void EndpointServer::Server::write_response(Connection& connection, Clock::time_point now) {
  while (connection.sent < connection.output.size()) {
    // MSG_NOSIGNAL: a client gone raises EPIPE here, not SIGPIPE in the process.
    ssize_t sent = send(connection.fd, connection.output.data() + connection.sent,
                        connection.output.size() - connection.sent, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0) {
      connection.done = errno != EAGAIN && errno != EWOULDBLOCK;
      return;
    }
    connection.sent += static_cast<std::size_t>(sent);
  }
  shutdown(connection.fd, SHUT_WR);  // the client sees the response's end now
  connection.phase = Connection::Phase::draining;
  connection.deadline = now + kDrainTimeout;
}

void EndpointServer::Server::drain(Connection& connection) {
  char discarded[4096];
  ssize_t got = recv(connection.fd, discarded, sizeof discarded, 0);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (got > 0) connection.discarded += static_cast<std::size_t>(got);
  connection.done = got <= 0 || connection.discarded > kMaxDiscarded;
}

// The response to a request's head ("METHOD TARGET HTTP/1.x" and its
// headers); `head_only` set for a HEAD. A handler that throws is a 500.
Response EndpointServer::Server::answer(std::string_view head, bool& head_only) const {
  std::string_view request_line = line_at(head, 0);
  std::size_t first_space = request_line.find(' ');
  std::size_t last_space = request_line.rfind(' ');
  if (first_space == std::string_view::npos ||
      request_line.find(' ', first_space + 1) != last_space) {
    return {400, {}, {}, {}};
  }
  std::string_view method = request_line.substr(0, first_space);
  std::string_view target = request_line.substr(first_space + 1, last_space - first_space - 1);
  std::string_view version = request_line.substr(last_space + 1);
  if (target.empty() || (version != "HTTP/1.1" && version != "HTTP/1.0")) return {400, {}, {}, {}};
  std::string_view path = target.substr(0, target.find('?'));
  head_only = method == "HEAD";
  // Every endpoint is a GET: another method finds none, as with a path not served.
  if (method != "GET" && !head_only) return {404, {}, {}, {}};
  try {
    if (path == "/metrics" && handlers.metrics) {
      return {200, std::string(kMetricsContentType), {}, handlers.metrics()};
    }
    if (path == "/healthz" && handlers.healthy) return probe("healthz", handlers.healthy);
    if (path == "/readyz" && handlers.ready) return probe("readyz", handlers.ready);
    if (handlers.pages) return handlers.pages({target, header_value(head, "authorization")});
  } catch (...) {
    return {500, {}, {}, {}};
  }
  return {404, {}, {}, {}};
}

bool loopback_address(std::string_view address) {
  ListenAddress parsed;
  if (!parse_address(address, parsed).empty()) return false;
  if (parsed.host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, parsed.host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, parsed.host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

EndpointServer::EndpointServer(std::string flag, std::string address, EndpointHandlers handlers)
    : server_(std::make_unique<Server>()) {
  auto fail = [&](const std::string& why) { return Error(flag + ": " + address + ": " + why); };
  ListenAddress parsed;
  if (std::string why = parse_address(address, parsed); !why.empty()) throw fail(why);
  server_->handlers = std::move(handlers);
  std::string why;
  server_->listener = listen_on(parsed, why);
  if (server_->listener < 0) throw fail(why);
  server_->stop_event = eventfd(0, EFD_CLOEXEC);
  if (server_->stop_event < 0) throw fail(std::string("eventfd: ") + std::strerror(errno));
  server_->thread = std::thread([server = server_.get()] { server->serve(); });
}

EndpointServer::~EndpointServer() {
  std::uint64_t one = 1;
  // Cannot fail: the counter is far from full.
  [[maybe_unused]] ssize_t written = write(server_->stop_event, &one, sizeof one);
  server_->thread.join();
}

int EndpointServer::port() const { return local_port(server_->listener); }

}  // namespace fluxop::daemon
