// Loopback sockets for the tests of the ports command (port_probe_test,
// ports_command_test). Test-only; header-only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace cc::agent::testing {

// A listener on 127.0.0.1:port (0 = any free port) with `backlog` that
// never accepts: a foreign service we do not own. Returns its fd (-1 on
// failure) and sets *bound to its port when given.
inline int LoopbackListener(int port, int backlog, int* bound = nullptr) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
      (backlog >= 0 && listen(fd, backlog) != 0) ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  if (bound) *bound = ntohs(a.sin_port);
  return fd;
}

// A port nobody listens on right now (bound to 0, then released).
inline int FreePort() {
  int port = 0;
  int fd = LoopbackListener(0, -1, &port);
  if (fd >= 0) close(fd);
  return port;
}

}  // namespace cc::agent::testing
