#include "agent/port_listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace cc::agent {
namespace {

// Fills `a` with addr:port; false when addr is not a literal of `family`.
bool MakeAddr(int family, const std::string& addr, int port, sockaddr_storage* a, socklen_t* len) {
  std::memset(a, 0, sizeof *a);
  if (family == AF_INET6) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(a);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    *len = sizeof *v6;
    return inet_pton(AF_INET6, addr.c_str(), &v6->sin6_addr) == 1;
  }
  auto* v4 = reinterpret_cast<sockaddr_in*>(a);
  v4->sin_family = AF_INET;
  v4->sin_port = htons(static_cast<uint16_t>(port));
  *len = sizeof *v4;
  return inet_pton(AF_INET, addr.c_str(), &v4->sin_addr) == 1;
}

// 0 when a socket of `family` can bind addr on some free port.
int TryAddress(int family, const std::string& addr) {
  sockaddr_storage a{};
  socklen_t len = 0;
  if (!MakeAddr(family, addr, 0, &a, &len)) return EINVAL;
  int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  int err = bind(fd, reinterpret_cast<sockaddr*>(&a), len) == 0 ? 0 : errno;
  close(fd);
  return err;
}

}  // namespace

Status PortListeners::SetAddress(const std::string& addr, std::string* note) {
  in6_addr probe6{};
  in_addr probe4{};
  if (addr.empty()) {
    family_ = AF_INET;
    bound_addr_ = "0.0.0.0";
    return Status::Ok();
  }
  if (inet_pton(AF_INET, addr.c_str(), &probe4) == 1) {
    family_ = AF_INET;
  } else if (inet_pton(AF_INET6, addr.c_str(), &probe6) == 1) {
    family_ = AF_INET6;
  } else {
    // A host name: how this node resolves it may differ from how its peers
    // do (Debian maps its own name to 127.0.1.1), so listen everywhere.
    family_ = AF_INET;
    bound_addr_ = "0.0.0.0";
    if (note) *note = addr + " is not an IP address; listening on all addresses (0.0.0.0)";
    return Status::Ok();
  }
  int err = TryAddress(family_, addr);
  if (err == EADDRNOTAVAIL) {
    bound_addr_ = family_ == AF_INET6 ? "::" : "0.0.0.0";
    if (note) {
      *note = addr + " is not an address of this node; listening on all addresses (" + bound_addr_ +
              ")";
    }
    return Status::Ok();
  }
  if (err != 0) {
    return Status::Io("cannot bind " + addr + ": " + strerror(err));
  }
  bound_addr_ = addr;
  return Status::Ok();
}

int PortListeners::Bind(int port) {
  if (family_ == 0) family_ = AF_INET;
  sockaddr_storage a{};
  socklen_t len = 0;
  if (!MakeAddr(family_, bound_addr_, port, &a, &len)) return EINVAL;
  int fd = socket(family_, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  int one = 1;
  // Lets us bind over our own TIME_WAIT leftovers of an earlier run; Linux
  // still refuses a port that another socket is listening on.
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), len) != 0 || listen(fd, SOMAXCONN) != 0) {
    int err = errno;
    close(fd);
    return err;
  }
  if (port == 0) {
    // Port 0 asks the kernel for a free one: report which (the nics stage
    // listens on every address this way).
    sockaddr_storage got{};
    socklen_t got_len = sizeof got;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&got), &got_len) == 0) {
      port = ntohs(got.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&got)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&got)->sin_port);
    }
  }
  fds_.push_back(fd);
  ports_.push_back(port);
  return 0;
}

Status PortListeners::Start(const std::string& token) {
  if (thread_.joinable()) return Status::Internal("listeners already started");
  line_ = token + "\n";
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Status::Io(std::string("pipe: ") + strerror(errno));
  }
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void PortListeners::Loop() {
  std::vector<pollfd> pfds;
  pfds.push_back({wake_[0], POLLIN, 0});
  for (int fd : fds_) pfds.push_back({fd, POLLIN, 0});
  for (;;) {
    int rc = poll(pfds.data(), pfds.size(), -1);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (pfds[0].revents != 0) return;  // Stop()
    for (size_t k = 1; k < pfds.size(); ++k) {
      if (pfds[k].revents == 0) continue;
      for (;;) {
        int c = accept4(pfds[k].fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) {
          if (errno == ECONNABORTED || errno == EINTR) continue;
          break;  // EAGAIN: drained
        }
        // A fresh socket's send buffer holds the line; a peer that vanished
        // just loses it.
        ssize_t sent = send(c, line_.data(), line_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)sent;
        close(c);
        accepted_.fetch_add(1);
      }
    }
  }
}

void PortListeners::Stop() {
  if (thread_.joinable()) {
    char b = 1;
    ssize_t w = write(wake_[1], &b, 1);
    (void)w;
    thread_.join();
  }
  for (int fd : fds_) close(fd);
  fds_.clear();
  for (int& fd : wake_) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

}  // namespace cc::agent
