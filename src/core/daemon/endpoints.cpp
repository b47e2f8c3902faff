#include "core/daemon/endpoints.h"

#include <fcntl.h>
#include <httplib.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>
#include <thread>
#include <vector>

#include "core/error.h"

namespace fluxop::daemon {

namespace {

constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kProbeContentType = "text/plain; charset=utf-8";

// A client that connects and then says nothing, or reads nothing, holds a
// worker (and the destructor) this long at most; probes and scrapes send
// their request at once.
constexpr time_t kTimeoutSeconds = 1;
// Probes and scrapes come one or two at a time: a few workers, not one per core.
constexpr std::size_t kWorkers = 4;

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

// A socket listening on the address, or -1 and `why` set. httplib binds
// through getaddrinfo too, but when it fails it does not say why.
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
      int fd = socket(candidate->ai_family, candidate->ai_socktype | SOCK_CLOEXEC,
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

// A probe's answer: "ok", or a 500 and "<name> check failed", in the words
// of controller-runtime's healthz handler.
httplib::Server::Handler probe(std::string name, std::function<bool()> check) {
  return [name = std::move(name), check = std::move(check)](const httplib::Request&,
                                                            httplib::Response& response) {
    if (check()) {
      response.set_content("ok", kProbeContentType);
    } else {
      response.status = 500;
      response.set_content(name + " check failed\n", kProbeContentType);
    }
  };
}

}  // namespace

// httplib's server on a socket of ours. Its stop() does nothing until its
// thread has begun to accept; shutting our socket down instead ends the
// accept loop whether it has begun or not (accept() fails at once). httplib
// gets a duplicate, which it closes when the loop ends: ours stays open until
// the end, so that the shutdown can never reach another socket that took its
// number.
struct EndpointServer::Server : httplib::Server {
  int socket = -1;  // listening
  std::thread thread;

  ~Server() override {
    if (socket >= 0) close(socket);
  }

  // Accepts on `duplicate` (of `socket`) in a thread of its own.
  void start(int duplicate) {
    svr_sock_ = duplicate;
    try {
      thread = std::thread([this] { listen_after_bind(); });
    } catch (...) {
      close(duplicate);
      throw;
    }
  }
};

EndpointServer::EndpointServer(std::string flag, std::string address, EndpointHandlers handlers)
    : server_(std::make_unique<Server>()) {
  auto fail = [&](const std::string& why) { return Error(flag + ": " + address + ": " + why); };
  ListenAddress parsed;
  if (std::string why = parse_address(address, parsed); !why.empty()) throw fail(why);

  httplib::Server& http = *server_;
  http.new_task_queue = [] { return new httplib::ThreadPool(kWorkers); };
  // One request per connection: a scraper's idle keep-alive connection
  // would otherwise hold a worker, and the destructor, for its timeout.
  http.set_keep_alive_max_count(1);
  http.set_keep_alive_timeout(kTimeoutSeconds);
  http.set_read_timeout(kTimeoutSeconds);
  http.set_write_timeout(kTimeoutSeconds);
  if (handlers.metrics) {
    http.Get("/metrics", [metrics = std::move(handlers.metrics)](const httplib::Request&,
                                                                 httplib::Response& response) {
      response.set_content(metrics(), kMetricsContentType);
    });
  }
  if (handlers.healthy) http.Get("/healthz", probe("healthz", std::move(handlers.healthy)));
  if (handlers.ready) http.Get("/readyz", probe("readyz", std::move(handlers.ready)));

  std::string why;
  server_->socket = listen_on(parsed, why);
  if (server_->socket < 0) throw fail(why);
  int duplicate = fcntl(server_->socket, F_DUPFD_CLOEXEC, 0);
  if (duplicate < 0) throw fail(std::string("dup: ") + std::strerror(errno));
  server_->start(duplicate);
}

EndpointServer::~EndpointServer() {
  shutdown(server_->socket, SHUT_RDWR);
  server_->thread.join();
}

int EndpointServer::port() const { return local_port(server_->socket); }

}  // namespace fluxop::daemon
