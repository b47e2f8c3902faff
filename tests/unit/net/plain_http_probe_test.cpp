// HttpClient::answers_tls_in_plain_http, how a loopback registry's scheme is
// decided: a server that answers the TLS handshake in plain HTTP, or with
// anything but a TLS record, one that answers in TLS, one that never answers
// (bounded, and stopped when the command is), none at all.
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "../loopback_listener.h"
#include "core/error.h"
#include "core/net/http.h"

namespace fluxop::net {
namespace {

using namespace std::chrono_literals;

// A loopback server whose one connection gets, once something arrives,
// `answer` (nothing: it answers never), then is held until the server goes.
class OneAnswer {
 public:
  explicit OneAnswer(std::string answer) : answer_(std::move(answer)) {
    listener_ = testing::listen_on_loopback(port_);
    thread_ = std::thread([this] {
      int connection = accept(listener_, nullptr, nullptr);
      if (connection < 0) return;
      char buffer[4096];
      if (read(connection, buffer, sizeof buffer) > 0 && !answer_.empty()) {
        [[maybe_unused]] ssize_t sent =
            send(connection, answer_.data(), answer_.size(), MSG_NOSIGNAL);
      }
      while (!stopping_) std::this_thread::sleep_for(10ms);
      close(connection);
    });
  }
  ~OneAnswer() {
    stopping_ = true;
    shutdown(listener_, SHUT_RDWR);
    close(listener_);
    thread_.join();
  }
  std::string authority() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  std::string answer_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

TEST_CASE("plain HTTP probe: a server answering the TLS handshake in plain HTTP") {
  OneAnswer server("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  HttpClient client(HttpOptions{});
  CHECK(client.answers_tls_in_plain_http(server.authority()));
  CHECK(client.requests_sent() == 0);  // a handshake, no request
}

TEST_CASE("plain HTTP probe: any answer that is no TLS record is plain HTTP, a TLS alert is not") {
  // Python's http.server answers a request line it cannot read with the
  // body of its error page alone.
  OneAnswer python("<!DOCTYPE HTML>\n<html><body>Bad request syntax</body></html>\n");
  HttpClient client(HttpOptions{});
  CHECK(client.answers_tls_in_plain_http(python.authority()));
  OneAnswer tls(std::string("\x15\x03\x03\x00\x02\x02\x28", 7));  // handshake_failure
  CHECK_FALSE(client.answers_tls_in_plain_http(tls.authority()));
}

TEST_CASE("plain HTTP probe: a server that never answers is no plain HTTP one, within the bound") {
  OneAnswer server("");
  HttpOptions options;
  options.request_timeout = 300ms;
  HttpClient client(options);
  CHECK_FALSE(client.answers_tls_in_plain_http(server.authority()));
}

TEST_CASE("plain HTTP probe: a command stopped meanwhile stops it") {
  OneAnswer server("");
  HttpClient client(HttpOptions{});  // a bound of 10 s
  auto started = std::chrono::steady_clock::now();
  auto cancelled = [&] { return std::chrono::steady_clock::now() - started > 200ms; };
  CHECK_THROWS_WITH_AS(client.answers_tls_in_plain_http(server.authority(), cancelled),
                       ("https://" + server.authority() + "/: cancelled").c_str(), Error);
}

TEST_CASE("plain HTTP probe: nothing listening") {
  int port = 0;
  int listener = testing::listen_on_loopback(port);
  close(listener);  // the port is free again, and refuses
  HttpClient client(HttpOptions{});
  CHECK_FALSE(client.answers_tls_in_plain_http("127.0.0.1:" + std::to_string(port)));
}

}  // namespace
}  // namespace fluxop::net
