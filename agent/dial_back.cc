#include "agent/dial_back.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

namespace cc {

std::string DialHelloLine(const DialHello& h) {
  return nlohmann::json{{"dial", 1}, {"node", h.node}, {"slot", h.slot}, {"secret", h.secret}}
      .dump();
}

std::optional<DialHello> ParseDialHello(const std::string& line) {
  if (line.size() > kMaxDialHello) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object() || j.value("dial", 0) != 1) return std::nullopt;
  DialHello h;
  for (auto [key, field] : {std::pair{"node", &h.node}, {"slot", &h.slot}, {"secret", &h.secret}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string() || it->get<std::string>().empty()) return std::nullopt;
    *field = it->get<std::string>();
  }
  return h;
}

bool SecretsEqual(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

bool SplitHostPort(const std::string& text, std::string* host, int* port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  std::string h = text.substr(0, colon), p = text.substr(colon + 1);
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  int n = std::stoi(p);
  if (n < 1 || n > 65535) return false;
  *host = h;
  *port = n;
  return true;
}

namespace {

// One attempt: a connected descriptor, or -1 with errno's text in *why.
int ConnectOnce(const std::string& host, int port, int timeout_ms, std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int gai = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (gai != 0) {
    *why = "cannot resolve " + host + ": " + gai_strerror(gai);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof err;
      if (poll(&p, 1, timeout_ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0) {
        rc = err == 0 ? 0 : -1;
        errno = err;
      } else {
        errno = ETIMEDOUT;
      }
    }
    if (rc != 0) {
      *why = "connecting to " + host + ":" + std::to_string(port) + ": " + std::strerror(errno);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  return fd;
}

bool WriteAll(int fd, const std::string& data, int timeout_ms) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, timeout_ms) <= 0) return false;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

int DialBack(const std::string& host_port, const DialHello& hello, double timeout_s,
             std::string* why) {
  std::string host;
  int port = 0;
  if (!SplitHostPort(host_port, &host, &port)) {
    *why = "--connect: '" + host_port + "' is not HOST:PORT";
    return -1;
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point end =
      Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  for (int attempt = 0;; ++attempt) {
    int fd = ConnectOnce(host, port, 3000, why);
    if (fd >= 0) {
      if (!WriteAll(fd, DialHelloLine(hello) + "\n", 3000)) {
        *why = "writing the hello to " + host_port + ": " + std::strerror(errno);
        close(fd);
        return -1;
      }
      // Blocking from here on: Serve() polls its own descriptors.
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    if (Clock::now() >= end) return -1;
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::min(1000, 100 << std::min(attempt, 3))));
  }
}

}  // namespace cc
