// A listening TCP socket on 127.0.0.1 and a free port, for the tests' fake
// servers.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

namespace fluxop::testing {

// The socket; its port in `port`.
inline int listen_on_loopback(int& port) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  port = ntohs(address.sin_port);
  listen(listener, 16);
  return listener;
}

}  // namespace fluxop::testing
