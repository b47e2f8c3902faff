// A tiny HTTP/1.1 server on 127.0.0.1 for client tests: each request (one
// per connection) is answered by a handler, and recorded. Given a server
// certificate it speaks HTTPS (TLS by OpenSSL); a handshake the client
// refuses is counted, not answered.
#pragma once

#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../loopback_listener.h"

namespace fluxop::testing {

struct FakeRequest {
  std::string method;
  std::string target;         // path and query
  std::string authorization;  // the header's value
  std::string head;           // the request line and every header, as sent
  std::string body;
};

struct FakeResponse {
  int status = 200;
  std::string body;
  std::string extra_headers;  // "Name: value\r\n" lines
};

// The PEM files of the server's certificate (chain) and key.
struct FakeTlsIdentity {
  std::string cert_file;
  std::string key_file;
};

class FakeApiServer {
 public:
  using Handler = std::function<FakeResponse(const FakeRequest&)>;

  explicit FakeApiServer(Handler handler) : FakeApiServer(std::move(handler), std::nullopt) {}
  FakeApiServer(Handler handler, const std::optional<FakeTlsIdentity>& tls)
      : handler_(std::move(handler)) {
    if (tls) tls_ = server_context(*tls);
    listener_ = listen_on_loopback(port_);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeApiServer() {
    shutdown(listener_, SHUT_RDWR);
    close(listener_);
    thread_.join();
  }

  std::string url() const {
    return (tls_ ? "https" : "http") + std::string("://127.0.0.1:") + std::to_string(port_);
  }
  std::vector<FakeRequest> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  // TLS handshakes that failed (the client refused the certificate), once
  // there are at least `expected` (within 30 s): the server sees a refused
  // handshake after the client has given up and returned.
  int failed_handshakes(int expected = 0) {
    std::unique_lock lock(mutex_);
    handshake_failed_.wait_for(lock, std::chrono::seconds(30),
                               [&] { return failed_handshakes_ >= expected; });
    return failed_handshakes_;
  }

 private:
  struct FreeContext {
    void operator()(SSL_CTX* context) const { SSL_CTX_free(context); }
  };
  struct FreeSsl {
    void operator()(SSL* ssl) const { SSL_free(ssl); }
  };

  static std::unique_ptr<SSL_CTX, FreeContext> server_context(const FakeTlsIdentity& identity) {
    // A client that drops the connection mid-handshake must not kill the tests.
    std::signal(SIGPIPE, SIG_IGN);
    std::unique_ptr<SSL_CTX, FreeContext> context(SSL_CTX_new(TLS_server_method()));
    if (!context ||
        SSL_CTX_use_certificate_chain_file(context.get(), identity.cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(context.get(), identity.key_file.c_str(), SSL_FILETYPE_PEM) !=
            1)
      throw std::runtime_error("fake API server: cannot load " + identity.cert_file);
    return context;
  }

  void serve() {
    for (;;) {
      int connection = accept(listener_, nullptr, nullptr);
      if (connection < 0) return;
      if (!tls_) {
        answer([connection](char* data, int size) { return read(connection, data, size); },
               [connection](const std::string& out) {
                 [[maybe_unused]] ssize_t n = write(connection, out.data(), out.size());
               });
      } else if (std::unique_ptr<SSL, FreeSsl> ssl(SSL_new(tls_.get()));
                 SSL_set_fd(ssl.get(), connection) == 1 && SSL_accept(ssl.get()) == 1) {
        answer([&ssl](char* data, int size) { return SSL_read(ssl.get(), data, size); },
               [&ssl](const std::string& out) {
                 SSL_write(ssl.get(), out.data(), static_cast<int>(out.size()));
                 SSL_shutdown(ssl.get());
               });
      } else {
        std::lock_guard lock(mutex_);
        ++failed_handshakes_;
        handshake_failed_.notify_all();
      }
      close(connection);
    }
  }

  static std::string header(const std::string& head, const std::string& name) {
    std::size_t at = head.find("\r\n" + name + ": ");
    if (at == std::string::npos) return "";
    at += name.size() + 4;
    return head.substr(at, head.find("\r\n", at) - at);
  }

  // Reads one request with `receive` (as read(2)), answers it with `send`.
  template <typename Receive, typename Send>
  void answer(Receive receive, Send send) {
    std::string data;
    char buffer[4096];
    std::size_t head_end;
    while ((head_end = data.find("\r\n\r\n")) == std::string::npos) {
      auto n = receive(buffer, sizeof buffer);
      if (n <= 0) return;
      data.append(buffer, static_cast<std::size_t>(n));
    }
    std::string head = data.substr(0, head_end);
    std::string length = header(head, "Content-Length");
    std::size_t body_size = length.empty() ? 0 : std::stoul(length);
    while (data.size() < head_end + 4 + body_size) {
      auto n = receive(buffer, sizeof buffer);
      if (n <= 0) return;
      data.append(buffer, static_cast<std::size_t>(n));
    }
    FakeRequest request;
    request.method = head.substr(0, head.find(' '));
    std::size_t target = head.find(' ') + 1;
    request.target = head.substr(target, head.find(' ', target) - target);
    request.authorization = header(head, "Authorization");
    request.head = head;
    request.body = data.substr(head_end + 4, body_size);
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
    }
    FakeResponse response = handler_(request);
    std::string out =
        "HTTP/1.1 " + std::to_string(response.status) +
        " X\r\nContent-Type: application/json\r\nConnection: close\r\n" + response.extra_headers +
        "Content-Length: " + std::to_string(response.body.size()) + "\r\n\r\n" + response.body;
    send(out);
  }

  Handler handler_;
  std::unique_ptr<SSL_CTX, FreeContext> tls_;
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable handshake_failed_;
  std::vector<FakeRequest> requests_;
  int failed_handshakes_ = 0;
};

}  // namespace fluxop::testing
