// The MTU half of the `nics` command: full-size UDP datagrams with the
// don't-fragment bit set (IP_MTU_DISCOVER = IP_PMTUDISC_DO), so that a
// node whose NIC, or a switch port on the way, has a smaller MTU than its
// subnet shows up as lost datagrams rather than as numbers that disagree.
// UdpEcho is the receiver: it answers every datagram with its token and the
// byte count it got. DfProbeAll is the sender.
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"

namespace cc::agent {

class UdpEcho {
 public:
  UdpEcho() = default;
  ~UdpEcho() { Stop(); }
  UdpEcho(const UdpEcho&) = delete;
  UdpEcho& operator=(const UdpEcho&) = delete;

  // Binds a UDP socket to addr (an IPv4/IPv6 literal this node has) on
  // `port`, or on a free port when `port` is 0 or taken. kBadArgument for a
  // non-literal, kIo when bind fails (EADDRNOTAVAIL: not this node's
  // address). REQUIRES: before Start().
  Status Bind(const std::string& addr, int port = 0);
  int port() const { return port_; }
  // Answers "<token> <bytes>\n" to every datagram, on its own thread.
  Status Start(const std::string& token);
  // Closes the socket and joins the thread. Idempotent.
  void Stop();
  long long answered() const { return answered_.load(); }

 private:
  void Loop();
  int fd_ = -1;
  int port_ = 0;
  std::string token_;
  int wake_[2] = {-1, -1};
  std::thread thread_;
  std::atomic<long long> answered_{0};
};

struct DfTarget {
  std::string addr;   // IPv4 / IPv6 literal
  int port = 0;       // its UdpEcho
  int bytes = 0;      // IP packet size to try (the subnet's MTU); >= 96
  std::string token;  // expected in the answer ("" = any)
};

struct DfResult {
  // "ok" (the full-size datagram came back as sent), "lost" (a small one
  // did, the full-size one not), "no-reply" (neither), "too-big-local"
  // (this node's own route MTU refused it: EMSGSIZE), "error".
  std::string state = "error";
  int path_mtu = 0;   // IP_MTU of the connected socket (0 unknown)
  std::string reply;  // a token that was not the expected one
  std::string note;
};

// Sends a small and a full-size datagram to every target at once, resends
// what is unanswered up to `tries` rounds of `timeout_ms` each. Result i
// belongs to target i. Never blocks longer than tries * timeout_ms plus a
// little.
std::vector<DfResult> DfProbeAll(const std::vector<DfTarget>& targets, int timeout_ms, int tries);

// The UDP payload that makes an IP packet of `bytes` (20 + 8 header bytes
// for IPv4, 40 + 8 for IPv6).
int DfPayloadBytes(int bytes, bool ipv6);

}  // namespace cc::agent
