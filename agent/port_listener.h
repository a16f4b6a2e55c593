// The receiving side of the `ports` command: TCP listeners on the ports a
// job needs, answering every connection with one token line and closing
// it, served by one background thread. Nothing stays listening after
// Stop() or destruction (docs/architecture.md "The agent": it leaves
// nothing listening).
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"

namespace cc::agent {

class PortListeners {
 public:
  PortListeners() = default;
  ~PortListeners() { Stop(); }
  PortListeners(const PortListeners&) = delete;
  PortListeners& operator=(const PortListeners&) = delete;

  // The address every Bind() uses: an IPv4/IPv6 literal, or "" for all
  // addresses. A host name, or a literal this node does not have
  // (EADDRNOTAVAIL: a NAT address) falls back to all addresses; `note`
  // then says so. kIo when the address cannot be bound for another reason.
  Status SetAddress(const std::string& addr, std::string* note);
  // The address bound ("0.0.0.0", "10.42.0.3", "::").
  const std::string& address() const { return bound_addr_; }

  // Binds and listens (SO_REUSEADDR, non-blocking). Returns 0, or the
  // errno (EADDRINUSE when another socket holds the port). Port 0 takes a
  // free port; ports() then holds the one taken. REQUIRES: before Start().
  int Bind(int port);
  const std::vector<int>& ports() const { return ports_; }

  // Starts the thread that answers `token` + "\n" to every connection.
  Status Start(const std::string& token);
  // Closes every listener and joins the thread. Idempotent.
  void Stop();
  // Connections answered so far.
  long long accepted() const { return accepted_.load(); }

 private:
  void Loop();
  std::string bound_addr_ = "0.0.0.0";
  int family_ = 0;  // AF_INET / AF_INET6, from SetAddress
  std::vector<int> fds_;
  std::vector<int> ports_;
  std::string line_;
  int wake_[2] = {-1, -1};
  std::thread thread_;
  std::atomic<long long> accepted_{0};
};

}  // namespace cc::agent
