#include "agent/df_probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/deadline.h"

namespace cc::agent {
namespace {

constexpr int kSmallBytes = 96;
constexpr size_t kMaxDatagram = 65536;

bool MakeAddr(const std::string& addr, int port, sockaddr_storage* a, socklen_t* len) {
  std::memset(a, 0, sizeof *a);
  auto* v4 = reinterpret_cast<sockaddr_in*>(a);
  if (inet_pton(AF_INET, addr.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    *len = sizeof *v4;
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(a);
  if (inet_pton(AF_INET6, addr.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    *len = sizeof *v6;
    return true;
  }
  return false;
}

// One target's socket and what came back.
struct Flight {
  int fd = -1;
  bool v6 = false;
  bool small_ok = false;
  bool big_ok = false;
  bool too_big = false;
  int small_len = 0;
  int big_len = 0;
  int send_err = 0;
};

void SendMissing(Flight& f) {
  std::string buf(static_cast<size_t>(std::max(f.big_len, f.small_len)), 'x');
  auto send_one = [&f, &buf](int len) {
    if (send(f.fd, buf.data(), static_cast<size_t>(len), 0) >= 0) return;
    if (errno == EMSGSIZE) {
      f.too_big = true;
    } else if (errno != ECONNREFUSED && errno != EAGAIN) {
      f.send_err = errno;
    }
  };
  if (!f.small_ok) send_one(f.small_len);
  if (!f.big_ok && !f.too_big) send_one(f.big_len);
}

// Reads every answer waiting on f.fd; a wrong token goes to *other.
void ReadAnswers(Flight& f, const std::string& token, std::string* other) {
  char buf[256];
  for (;;) {
    ssize_t n = recv(f.fd, buf, sizeof buf - 1, MSG_DONTWAIT);
    if (n < 0) return;  // EAGAIN, or ECONNREFUSED from an ICMP port unreachable
    buf[n] = 0;
    std::string line(buf, static_cast<size_t>(n));
    if (!line.empty() && line.back() == '\n') line.pop_back();
    size_t sp = line.rfind(' ');
    if (sp == std::string::npos) continue;
    std::string who = line.substr(0, sp);
    int got = std::atoi(line.c_str() + sp + 1);
    if (!token.empty() && who != token) {
      *other = who.substr(0, 80);
      continue;
    }
    if (got == f.small_len) f.small_ok = true;
    if (got == f.big_len) f.big_ok = true;
  }
}

}  // namespace

int DfPayloadBytes(int bytes, bool ipv6) { return bytes - (ipv6 ? 48 : 28); }

Status UdpEcho::Bind(const std::string& addr, int port) {
  sockaddr_storage a{};
  socklen_t len = 0;
  if (!MakeAddr(addr, port, &a, &len)) return Status::BadArgument("not an IP literal: " + addr);
  fd_ = socket(a.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) return Status::Io(std::string("socket: ") + strerror(errno));
  int rc = bind(fd_, reinterpret_cast<sockaddr*>(&a), len);
  if (rc != 0 && errno == EADDRINUSE && port != 0) {
    MakeAddr(addr, 0, &a, &len);
    rc = bind(fd_, reinterpret_cast<sockaddr*>(&a), len);
  }
  if (rc != 0) {
    int err = errno;
    close(fd_);
    fd_ = -1;
    return Status::Io("udp bind " + addr + ": " + strerror(err));
  }
  sockaddr_storage got{};
  socklen_t got_len = sizeof got;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&got), &got_len);
  port_ = ntohs(got.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&got)->sin6_port
                                          : reinterpret_cast<sockaddr_in*>(&got)->sin_port);
  return Status::Ok();
}

Status UdpEcho::Start(const std::string& token) {
  if (fd_ < 0) return Status::Internal("udp echo: Start before Bind");
  if (thread_.joinable()) return Status::Internal("udp echo already started");
  token_ = token;
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Status::Io(std::string("pipe: ") + strerror(errno));
  }
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void UdpEcho::Loop() {
  std::string buf(kMaxDatagram, '\0');
  for (;;) {
    pollfd p[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(p, 2, -1) < 0 && errno != EINTR) return;
    if (p[1].revents) return;
    if (!(p[0].revents & POLLIN)) continue;
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    ssize_t n =
        recvfrom(fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) continue;
    std::string answer = token_ + " " + std::to_string(n) + "\n";
    // Counted before the answer leaves, so whoever got it sees the count.
    ++answered_;
    sendto(fd_, answer.data(), answer.size(), 0, reinterpret_cast<sockaddr*>(&from), from_len);
  }
}

void UdpEcho::Stop() {
  if (thread_.joinable()) {
    char c = 1;
    (void)!write(wake_[1], &c, 1);
    thread_.join();
  }
  for (int* fd : {&fd_, &wake_[0], &wake_[1]}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

namespace {

// A connected DF socket for target t in *f; on failure f->fd stays -1 and
// r->note says why.
void OpenFlight(const DfTarget& t, Flight* f, DfResult* r) {
  sockaddr_storage a{};
  socklen_t len = 0;
  if (!MakeAddr(t.addr, t.port, &a, &len)) {
    r->note = "not an IP literal: " + t.addr;
    return;
  }
  f->v6 = a.ss_family == AF_INET6;
  f->small_len = DfPayloadBytes(kSmallBytes, f->v6);
  f->big_len = std::max(f->small_len + 1, DfPayloadBytes(t.bytes, f->v6));
  f->fd = socket(a.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (f->fd < 0) {
    r->note = std::string("socket: ") + strerror(errno);
    return;
  }
  // DF set, and no fragmentation by this host either: a datagram larger
  // than the route's MTU fails with EMSGSIZE here, one larger than a
  // hop's MTU on the way is dropped there.
  int pmtu = IP_PMTUDISC_DO;
  if (f->v6) {
    setsockopt(f->fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof pmtu);
  } else {
    setsockopt(f->fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
  }
  if (connect(f->fd, reinterpret_cast<sockaddr*>(&a), len) != 0) {
    r->note = std::string("connect: ") + strerror(errno);
    close(f->fd);
    f->fd = -1;
  }
}

bool Done(const Flight& f) { return f.small_ok && (f.big_ok || f.too_big); }

// One try: sends what is still missing on every open flight, then reads
// answers until all came or timeout_ms passed. False when nothing was left
// to send.
bool TryOnce(const std::vector<DfTarget>& targets, int timeout_ms, std::vector<Flight>& fl,
             std::vector<DfResult>& out) {
  std::vector<pollfd> pfds;
  std::vector<size_t> idx;
  for (size_t i = 0; i < fl.size(); ++i) {
    Flight& f = fl[i];
    if (f.fd < 0 || f.send_err || Done(f)) continue;
    SendMissing(f);
    pfds.push_back({f.fd, POLLIN, 0});
    idx.push_back(i);
  }
  if (pfds.empty()) return false;
  Deadline d = Deadline::In(Millis(timeout_ms));
  while (!d.Passed()) {
    int left = static_cast<int>(d.RemainingMs());
    int n = poll(pfds.data(), pfds.size(), std::max(1, left));
    if (n <= 0) continue;
    bool all = true;
    for (size_t k = 0; k < pfds.size(); ++k) {
      Flight& f = fl[idx[k]];
      if (pfds[k].revents) ReadAnswers(f, targets[idx[k]].token, &out[idx[k]].reply);
      pfds[k].revents = 0;
      all = all && Done(f);
    }
    if (all) break;
  }
  return true;
}

// Closes the flight and says what came of it.
void Conclude(const DfTarget& t, Flight& f, DfResult* r) {
  int mtu = 0;
  socklen_t ml = sizeof mtu;
  if (getsockopt(f.fd, f.v6 ? IPPROTO_IPV6 : IPPROTO_IP, f.v6 ? IPV6_MTU : IP_MTU, &mtu, &ml) ==
      0) {
    r->path_mtu = mtu;
  }
  close(f.fd);
  if (f.too_big) {
    r->state = "too-big-local";
    r->note = std::to_string(t.bytes) + "-byte packets exceed this node's route MTU" +
              (r->path_mtu ? " (" + std::to_string(r->path_mtu) + ")" : "");
  } else if (f.send_err) {
    r->state = "error";
    r->note = std::string("send: ") + strerror(f.send_err);
  } else if (f.big_ok) {
    r->state = "ok";
  } else if (f.small_ok) {
    r->state = "lost";
    r->note =
        "small datagrams came back, " + std::to_string(t.bytes) + "-byte ones with DF did not";
  } else {
    r->state = "no-reply";
  }
}

}  // namespace

std::vector<DfResult> DfProbeAll(const std::vector<DfTarget>& targets, int timeout_ms, int tries) {
  std::vector<DfResult> out(targets.size());
  std::vector<Flight> fl(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) OpenFlight(targets[i], &fl[i], &out[i]);
  for (int round = 0; round < std::max(1, tries); ++round) {
    if (!TryOnce(targets, timeout_ms, fl, out)) break;
  }
  for (size_t i = 0; i < fl.size(); ++i) {
    if (fl[i].fd >= 0) Conclude(targets[i], fl[i], &out[i]);
  }
  return out;
}

}  // namespace cc::agent
