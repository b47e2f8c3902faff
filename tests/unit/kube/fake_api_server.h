// A tiny HTTP/1.1 server on 127.0.0.1 for client tests: each request (one
// per connection) is answered by a handler, and recorded.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fluxop::testing {

struct FakeRequest {
  std::string method;
  std::string target;         // path and query
  std::string authorization;  // the header's value
  std::string body;
};

struct FakeResponse {
  int status = 200;
  std::string body;
  std::string extra_headers;  // "Name: value\r\n" lines
};

class FakeApiServer {
 public:
  using Handler = std::function<FakeResponse(const FakeRequest&)>;

  explicit FakeApiServer(Handler handler) : handler_(std::move(handler)) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    socklen_t length = sizeof address;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    listen(listener_, 16);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeApiServer() {
    shutdown(listener_, SHUT_RDWR);
    close(listener_);
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<FakeRequest> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void serve() {
    for (;;) {
      int connection = accept(listener_, nullptr, nullptr);
      if (connection < 0) return;
      answer(connection);
      close(connection);
    }
  }

  static std::string header(const std::string& head, const std::string& name) {
    std::size_t at = head.find("\r\n" + name + ": ");
    if (at == std::string::npos) return "";
    at += name.size() + 4;
    return head.substr(at, head.find("\r\n", at) - at);
  }

  void answer(int connection) {
    std::string data;
    char buffer[4096];
    std::size_t head_end;
    while ((head_end = data.find("\r\n\r\n")) == std::string::npos) {
      ssize_t n = read(connection, buffer, sizeof buffer);
      if (n <= 0) return;
      data.append(buffer, static_cast<std::size_t>(n));
    }
    std::string head = data.substr(0, head_end);
    std::string length = header(head, "Content-Length");
    std::size_t body_size = length.empty() ? 0 : std::stoul(length);
    while (data.size() < head_end + 4 + body_size) {
      ssize_t n = read(connection, buffer, sizeof buffer);
      if (n <= 0) return;
      data.append(buffer, static_cast<std::size_t>(n));
    }
    FakeRequest request;
    request.method = head.substr(0, head.find(' '));
    std::size_t target = head.find(' ') + 1;
    request.target = head.substr(target, head.find(' ', target) - target);
    request.authorization = header(head, "Authorization");
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
    [[maybe_unused]] ssize_t written = write(connection, out.data(), out.size());
  }

  Handler handler_;
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<FakeRequest> requests_;
};

}  // namespace fluxop::testing
