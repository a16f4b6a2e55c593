#include "orchestrator/transport/dial_back_listener.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/dial_back.h"
#include "orchestrator/transport/agent_channel.h"

namespace cc {
namespace {

constexpr int kPollMs = 100;
// A burst of agents dialling at once (one srun for every node) must not
// find the backlog full.
constexpr int kBacklog = 4096;

std::string PeerName(const sockaddr_in& a) {
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
  return std::string(buf) + ":" + std::to_string(ntohs(a.sin_port));
}

}  // namespace

Result<std::unique_ptr<DialBackListener>> DialBackListener::Open(
    const std::string& address, int port, std::string secret, std::set<std::string> nodes,
    std::function<void(const std::string&)> on_refusal) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (address.empty()) {
    a.sin_addr.s_addr = htonl(INADDR_ANY);
  } else if (inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1) {
    return Status::BadArgument("cannot listen on '" + address + "': not an IPv4 address");
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::Io(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, kBacklog) != 0) {
    std::string why = std::strerror(errno);
    close(fd);
    return Status::Io("cannot listen on " + (address.empty() ? "*" : address) + ":" +
                      std::to_string(port) + " for the agents to dial back: " + why);
  }
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return std::unique_ptr<DialBackListener>(new DialBackListener(
      fd, ntohs(a.sin_port), std::move(secret), std::move(nodes), std::move(on_refusal)));
}

DialBackListener::DialBackListener(int fd, int port, std::string secret,
                                   std::set<std::string> nodes,
                                   std::function<void(const std::string&)> on_refusal)
    : fd_(fd),
      port_(port),
      secret_(std::move(secret)),
      nodes_(std::move(nodes)),
      on_refusal_(std::move(on_refusal)) {
  thread_ = std::thread([this] { Loop(); });
}

DialBackListener::~DialBackListener() {
  stop_ = true;
  thread_.join();
  close(fd_);
  for (Pending& p : pending_) close(p.fd);
  for (auto& [key, fd] : ready_) close(fd);
}

void DialBackListener::Loop() {
  while (!stop_) {
    std::vector<pollfd> fds{{fd_, POLLIN, 0}};
    for (const Pending& p : pending_) fds.push_back({p.fd, POLLIN, 0});
    int n = poll(fds.data(), fds.size(), kPollMs);
    if (n < 0 && errno != EINTR) break;
    if (n > 0 && fds[0].revents) Accept();
    const auto now = std::chrono::steady_clock::now();
    std::vector<Pending> left;
    for (size_t i = 0; i < pending_.size(); ++i) {
      Pending& p = pending_[i];
      bool done = i + 1 < fds.size() && fds[i + 1].revents && Read(p);
      if (!done && now - p.since >
                       std::chrono::milliseconds(static_cast<long long>(kHelloTimeoutS * 1000))) {
        Refuse(p, "no hello within " + std::to_string(static_cast<int>(kHelloTimeoutS)) + " s");
        done = true;
      }
      if (!done) left.push_back(std::move(p));
    }
    pending_ = std::move(left);
  }
}

void DialBackListener::Accept() {
  for (;;) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    int c = accept4(fd_, reinterpret_cast<sockaddr*>(&a), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0) return;  // EAGAIN: no more for now
    pending_.push_back({c, PeerName(a), "", std::chrono::steady_clock::now()});
  }
}

bool DialBackListener::Read(Pending& p) {
  char buf[512];
  for (;;) {
    // One byte at a time past the hello would be slow; the hello is short
    // and nothing else is sent before the controller speaks, so read in
    // chunks and keep only up to the first newline.
    ssize_t r = recv(p.fd, buf, sizeof buf, MSG_PEEK);
    if (r == 0) {
      Refuse(p, "closed before its hello");
      return true;
    }
    if (r < 0) {
      if (errno == EAGAIN || errno == EINTR) return false;
      Refuse(p, std::string("reading its hello: ") + std::strerror(errno));
      return true;
    }
    const char* nl = static_cast<const char*>(memchr(buf, '\n', static_cast<size_t>(r)));
    size_t take = nl ? static_cast<size_t>(nl - buf) + 1 : static_cast<size_t>(r);
    r = recv(p.fd, buf, take, 0);
    if (r <= 0) continue;
    p.buffer.append(buf, static_cast<size_t>(r));
    if (!p.buffer.empty() && p.buffer.back() == '\n') {
      p.buffer.pop_back();
      Judge(p, p.buffer);
      return true;
    }
    if (p.buffer.size() > kMaxDialHello) {
      Refuse(p, "a hello longer than " + std::to_string(kMaxDialHello) + " bytes");
      return true;
    }
  }
}

void DialBackListener::Judge(Pending& p, const std::string& line) {
  std::optional<DialHello> h = ParseDialHello(line);
  if (!h) return Refuse(p, "not a clustercheck agent's hello");
  if (!SecretsEqual(h->secret, secret_))
    return Refuse(p, "wrong secret (says it is " + h->node + ")");
  if (!nodes_.count(h->node)) return Refuse(p, "node " + h->node + " is not in this run");
  std::unique_lock<std::mutex> lock(mu_);
  if (!seen_.insert({h->node, h->slot}).second) {
    lock.unlock();
    return Refuse(p, "a second connection for " + h->node + " (slot " + h->slot + ")");
  }
  ready_[{h->node, h->slot}] = p.fd;
  dialled_.notify_all();
}

void DialBackListener::Refuse(Pending& p, const std::string& why) {
  close(p.fd);
  std::string entry = p.peer + ": " + why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    refusals_.push_back(entry);
  }
  if (on_refusal_) on_refusal_("refused a dial-back from " + entry);
}

Result<int> DialBackListener::Await(const std::string& node, const std::string& slot,
                                    Deadline deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto key = std::make_pair(node, slot);
  for (;;) {
    auto it = ready_.find(key);
    if (it != ready_.end()) {
      int fd = it->second;
      ready_.erase(it);
      return fd;
    }
    if (seen_.count(key))
      return Status::BadArgument(node + "'s agent in slot " + slot + " was taken");
    if (InterruptFlag().load()) return Status::Interrupted("interrupted waiting for " + node);
    if (deadline.Passed()) {
      return Status::Timeout("no agent dialled back from " + node + " within the deadline");
    }
    dialled_.wait_for(lock, std::chrono::milliseconds(std::min<long long>(
                                kCancelPollMs, std::max(1LL, deadline.RemainingMs()))));
  }
}

bool DialBackListener::Dialled(const std::string& node, const std::string& slot) const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_.count({node, slot}) > 0;
}

std::vector<std::string> DialBackListener::refusals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refusals_;
}

std::string LocalAddressTowards(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), "9", &hints, &res) != 0) return "";
  std::string out;
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  // A datagram socket's connect sends nothing: it only asks for the route.
  if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    char buf[INET_ADDRSTRLEN] = {};
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0 &&
        inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf) != nullptr) {
      out = buf;
    }
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(res);
  return out;
}

}  // namespace cc
