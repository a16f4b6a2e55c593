#include "agent/port_probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <sstream>

namespace cc::agent {

const char* ProbeStateName(ProbeState s) {
  switch (s) {
    case ProbeState::kOpen:
      return "open";
    case ProbeState::kOpenOther:
      return "open-other";
    case ProbeState::kRefused:
      return "refused";
    case ProbeState::kFiltered:
      return "filtered";
    case ProbeState::kUnreachable:
      return "unreachable";
    case ProbeState::kError:
      return "error";
  }
  return "error";
}

ErrnoState StateForConnectErrno(int err) {
  switch (err) {
    case ECONNREFUSED:
      return {ProbeState::kRefused, ""};
    case ETIMEDOUT:
      return {ProbeState::kFiltered, "no answer (SYN retries ran out)"};
    case EHOSTUNREACH:
      return {ProbeState::kUnreachable, "host unreachable (no route or ICMP)"};
    case ENETUNREACH:
      return {ProbeState::kUnreachable, "network unreachable (no route or ICMP)"};
    case EHOSTDOWN:
      return {ProbeState::kUnreachable, "host down"};
    // A DROP or REJECT in the sender's own OUTPUT chain fails the SYN's
    // transmission with EPERM on Linux; the packet never left this node.
    case EPERM:
    case EACCES:
      return {ProbeState::kFiltered, std::string("local policy (") +
                                         (err == EPERM ? "EPERM" : "EACCES") +
                                         "): the sender's own firewall refused to send"};
    default:
      return {ProbeState::kError, std::string("sender could not test: ") + strerror(err)};
  }
}

Result<std::pair<int, int>> ParseLocalPortRange(const std::string& text) {
  std::istringstream in(text);
  long lo = 0, hi = 0;
  std::string rest;
  if (!(in >> lo >> hi) || (in >> rest) || lo < 1 || hi > 65535 || lo > hi) {
    std::string shown = text.substr(0, 60);
    while (!shown.empty() && (shown.back() == '\n' || shown.back() == ' ')) shown.pop_back();
    return Status::BadArgument("ip_local_port_range is not two ports, low first: '" + shown + "'");
  }
  return std::make_pair(static_cast<int>(lo), static_cast<int>(hi));
}

std::vector<int> SpreadPorts(int lo, int hi, int n) {
  std::vector<int> out;
  if (n <= 0 || lo > hi) return out;
  long long span = static_cast<long long>(hi) - lo + 1;
  if (n > span) n = static_cast<int>(span);
  for (int i = 0; i < n; ++i) {
    // Middle of slot i of n equal slots: lo + (2i+1)*span/(2n).
    out.push_back(static_cast<int>(lo + (2LL * i + 1) * span / (2LL * n)));
  }
  return out;
}

std::vector<int> SlotCandidates(int lo, int hi, int n, int i, int max) {
  std::vector<int> out;
  std::vector<int> mids = SpreadPorts(lo, hi, n);
  if (i < 0 || i >= static_cast<int>(mids.size()) || max <= 0) return out;
  long long span = static_cast<long long>(hi) - lo + 1;
  int m = static_cast<int>(mids.size());
  int slot_lo = static_cast<int>(lo + i * span / m);
  int slot_hi = static_cast<int>(lo + (i + 1) * span / m - 1);
  for (int p = mids[i]; p <= slot_hi && static_cast<int>(out.size()) < max; ++p) out.push_back(p);
  for (int p = mids[i] - 1; p >= slot_lo && static_cast<int>(out.size()) < max; --p) {
    out.push_back(p);
  }
  return out;
}

int UsableParallel(int wanted, int reserved) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    long long room = static_cast<long long>(rl.rlim_cur) - reserved - 16;
    if (room < wanted) wanted = static_cast<int>(std::max(1LL, room));
  }
  return std::max(1, wanted);
}

namespace {

struct Resolved {
  sockaddr_storage addr{};
  socklen_t len = 0;
  std::string error;  // "" when resolved
};

Resolved Resolve(const std::string& host) {
  Resolved r;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&r.addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&r.addr);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    r.len = sizeof(sockaddr_in);
    return r;
  }
  if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    r.len = sizeof(sockaddr_in6);
    return r;
  }
  // A name: resolved the way this node resolves it, as NCCL would.
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) {
    r.error = "cannot resolve '" + host + "': " + gai_strerror(rc);
    return r;
  }
  std::memcpy(&r.addr, res->ai_addr, res->ai_addrlen);
  r.len = res->ai_addrlen;
  freeaddrinfo(res);
  return r;
}

void SetPort(sockaddr_storage& a, int port) {
  if (a.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&a)->sin_port = htons(static_cast<uint16_t>(port));
  } else {
    reinterpret_cast<sockaddr_in6*>(&a)->sin6_port = htons(static_cast<uint16_t>(port));
  }
}

// One socket in flight.
struct Active {
  size_t index;
  int fd;
  std::chrono::steady_clock::time_point start;
  Deadline deadline;
  bool connected = false;
  std::string buf;
};

class ProbeRun {
 public:
  ProbeRun(const std::vector<ProbeTarget>& targets, const ProbeOptions& o)
      : targets_(targets), options_(o), results_(targets.size()) {}

  std::vector<ProbeResult> Run() {
    ResolveAll();
    int parallel = std::max(1, options_.parallel);
    size_t next = 0;
    while (next < targets_.size() || !active_.empty()) {
      while (next < targets_.size() && static_cast<int>(active_.size()) < parallel) {
        if (!Start(next)) break;  // out of descriptors: wait for one to end
        ++next;
      }
      // Start() only stops early while others are in flight, so an empty
      // window here means every target has its verdict.
      if (!active_.empty()) PollOnce();
    }
    return std::move(results_);
  }

 private:
  void ResolveAll() {
    for (const ProbeTarget& t : targets_) {
      if (!resolved_.count(t.addr)) resolved_[t.addr] = Resolve(t.addr);
    }
  }

  // false when no socket could be made (EMFILE/ENFILE) and the caller
  // should let in-flight probes finish first.
  bool Start(size_t i) {
    const ProbeTarget& t = targets_[i];
    const Resolved& r = resolved_[t.addr];
    std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now();
    if (!r.error.empty()) {
      results_[i] = {ProbeState::kUnreachable, 0, 0, "", r.error};
      return true;
    }
    int fd = socket(r.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      if ((errno == EMFILE || errno == ENFILE) && !active_.empty()) return false;
      results_[i] = {ProbeState::kError, 0, errno, "", "socket(): " + std::string(strerror(errno))};
      return true;
    }
    sockaddr_storage a = r.addr;
    SetPort(a, t.port);
    Active act{i, fd, now, Deadline::At(RealClock(), now + Millis(options_.timeout_ms)), false, ""};
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), r.len) == 0) {
      act.connected = true;
    } else if (errno != EINPROGRESS) {
      int err = errno;
      close(fd);
      ErrnoState es = StateForConnectErrno(err);
      results_[i] = {es.state, Ms(now), err, "", es.note};
      return true;
    }
    active_.push_back(std::move(act));
    return true;
  }

  static double Ms(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  }

  void PollOnce() {
    std::vector<pollfd> fds(active_.size());
    long long wait_ms = 1000;
    for (size_t k = 0; k < active_.size(); ++k) {
      fds[k] = {active_[k].fd, static_cast<short>(active_[k].connected ? POLLIN : POLLOUT), 0};
      wait_ms = std::min(wait_ms, active_[k].deadline.RemainingMs());
    }
    // +1: RemainingMs rounds down, and a 0 ms poll would spin until then.
    int rc = poll(fds.data(), fds.size(), static_cast<int>(wait_ms) + 1);
    std::vector<Active> still;
    still.reserve(active_.size());
    for (size_t k = 0; k < active_.size(); ++k) {
      Active& a = active_[k];
      bool done = rc > 0 && fds[k].revents != 0 ? Step(a) : false;
      if (!done && a.deadline.Passed()) {
        done = true;
        if (a.connected) {
          Complete(a, ProbeState::kOpenOther, 0, "connected, but no answer within the deadline");
        } else {
          Complete(a, ProbeState::kFiltered, 0, "no answer within the deadline");
        }
      }
      if (done) {
        close(a.fd);
      } else {
        still.push_back(std::move(a));
      }
    }
    active_.swap(still);
  }

  // Handles readiness; true when the probe reached its verdict.
  bool Step(Active& a) {
    if (!a.connected) {
      int err = 0;
      socklen_t len = sizeof err;
      if (getsockopt(a.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err == EINPROGRESS || err == EALREADY) return false;
      if (err != 0) {
        ErrnoState es = StateForConnectErrno(err);
        Complete(a, es.state, err, es.note);
        return true;
      }
      a.connected = true;
      // Fall through: the token may already be there.
    }
    char buf[256];
    for (;;) {
      ssize_t n = recv(a.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        a.buf.append(buf, static_cast<size_t>(n));
        size_t nl = a.buf.find('\n');
        if (nl != std::string::npos || a.buf.size() >= 128) {
          return Judge(a, a.buf.substr(0, std::min(nl, a.buf.size())), "");
        }
        continue;
      }
      if (n == 0)
        return Judge(a, a.buf, a.buf.empty() ? "connected, then closed without a word" : "");
      if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
      if (errno == EINTR) continue;
      return Judge(a, a.buf, std::string("connected, then ") + strerror(errno));
    }
  }

  bool Judge(Active& a, std::string line, const std::string& note) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const ProbeTarget& t = targets_[a.index];
    if (!t.token.empty() && line == t.token) {
      Complete(a, ProbeState::kOpen, 0, "");
      return true;
    }
    Complete(a, ProbeState::kOpenOther, 0, note);
    results_[a.index].reply = line.substr(0, 80);
    return true;
  }

  void Complete(const Active& a, ProbeState s, int err, const std::string& note) {
    ProbeResult& r = results_[a.index];
    r.state = s;
    r.ms = Ms(a.start);
    r.err = err;
    r.note = note;
  }

  const std::vector<ProbeTarget>& targets_;
  ProbeOptions options_;
  std::vector<ProbeResult> results_;
  std::map<std::string, Resolved> resolved_;
  std::vector<Active> active_;
};

}  // namespace

std::vector<ProbeResult> ProbeAll(const std::vector<ProbeTarget>& targets,
                                  const ProbeOptions& options) {
  return ProbeRun(targets, options).Run();
}

}  // namespace cc::agent
