// A loopback server for the HTTP client's tests: each connection, on a
// thread of its own, has its request read (and kept, for the tests that
// check what was sent), then runs a behaviour that writes what it likes.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../loopback_listener.h"

namespace fluxop::testing {

// `behaviour` writes what it likes to the socket, and returns soon once
// `stopping` is set.
class MisbehavingServer {
 public:
  using Behaviour = std::function<void(int fd, const std::atomic<bool>& stopping)>;

  explicit MisbehavingServer(Behaviour behaviour) : behaviour_(std::move(behaviour)) {
    listener_ = fluxop::testing::listen_on_loopback(port_);
    acceptor_ = std::thread([this] {
      for (;;) {
        int connection = accept(listener_, nullptr, nullptr);
        if (connection < 0) return;  // the listener was shut down
        std::lock_guard lock(mutex_);
        connections_.emplace_back([this, connection] {
          std::string request = read_head(connection);
          {
            std::lock_guard lock(mutex_);
            requests_.push_back(std::move(request));
          }
          behaviour_(connection, stopping_);
          close(connection);
        });
      }
    });
  }
  ~MisbehavingServer() {
    stopping_ = true;
    shutdown(listener_, SHUT_RDWR);
    close(listener_);
    acceptor_.join();
    for (std::thread& connection : connections_) connection.join();
  }

  std::string url(const std::string& path) const { return "http://" + authority() + path; }
  std::string authority() const { return "127.0.0.1:" + std::to_string(port_); }

  // The request line and headers of every request received so far.
  std::vector<std::string> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  // Up to the blank line that ends the headers (a body that came along with
  // them is kept too), or whatever came before the client stopped sending.
  static std::string read_head(int connection) {
    std::string head;
    char buffer[4096];
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < (1 << 20)) {
      ssize_t n = read(connection, buffer, sizeof buffer);
      if (n <= 0) break;
      head.append(buffer, static_cast<std::size_t>(n));
    }
    return head;
  }

  Behaviour behaviour_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;  // guards connections_ and requests_
  std::vector<std::thread> connections_;
  std::vector<std::string> requests_;
  std::thread acceptor_;
};

// Waits `duration` unless stopped first; false when stopped.
inline bool pause(std::chrono::milliseconds duration, const std::atomic<bool>& stopping) {
  for (auto end = std::chrono::steady_clock::now() + duration;
       std::chrono::steady_clock::now() < end;) {
    if (stopping) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return !stopping;
}

inline void send_text(int fd, const std::string& text) {
  // MSG_NOSIGNAL: a client that gave up is no SIGPIPE.
  [[maybe_unused]] ssize_t n = send(fd, text.data(), text.size(), MSG_NOSIGNAL);
}

}  // namespace fluxop::testing
