// The sending side of the `ports` command: many TCP connects at once
// (non-blocking connect + poll, a sliding window of `parallel` sockets),
// each with its own deadline, each reading the receiver's token line. Plus
// the pure pieces the command needs: the ephemeral range file, an evenly
// spread sample of it, and the errno -> state map.
//
// States (the wire names in quotes):
//   "open"        connected and the expected token came back
//   "open-other"  connected, but no token or another one: something else
//                 answers there (sshd, a real service, another node)
//   "refused"     ECONNREFUSED: an RST (no listener, or REJECT --reject-with
//                 tcp-reset) or ICMP port-unreachable (REJECT's default)
//   "filtered"    no answer before the deadline (a DROP somewhere), or the
//                 sender's own policy refused to send (EPERM/EACCES from a
//                 local OUTPUT rule: the note says "local policy")
//   "unreachable" EHOSTUNREACH / ENETUNREACH: no route, or ICMP unreachable
//                 (REJECT --reject-with icmp-host-unreachable, ...), or the
//                 address does not resolve
//   "error"       the sender could not test (out of sockets or ports)
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/deadline.h"
#include "common/status.h"

namespace cc::agent {

enum class ProbeState { kOpen, kOpenOther, kRefused, kFiltered, kUnreachable, kError };

const char* ProbeStateName(ProbeState s);

// The state a failed connect's errno stands for, and a note for people
// ("" when the state says it all).
struct ErrnoState {
  ProbeState state;
  std::string note;
};
ErrnoState StateForConnectErrno(int err);

// "32768\t60999\n" (net.ipv4.ip_local_port_range) -> {32768, 60999}.
// kBadArgument quoting the text when it is not two ports, low first.
Result<std::pair<int, int>> ParseLocalPortRange(const std::string& text);

// n ports spread evenly over [lo, hi]: the middle of n equal slots, so
// neither end of the range (where other software often sits) is favoured.
// Deterministic; fewer than n only when the range is smaller than n.
std::vector<int> SpreadPorts(int lo, int hi, int n);

// The ports to try, in order, for slot `i` of SpreadPorts(lo, hi, n) when
// its first choice is taken: the slot's ports from its middle upwards,
// then downwards, at most `max` of them.
std::vector<int> SlotCandidates(int lo, int hi, int n, int i, int max);

struct ProbeTarget {
  std::string node;  // receiver's name, echoed back
  std::string addr;  // IPv4 / IPv6 literal or a host name
  int port = 0;
  std::string token;  // expected first line; "" = plain connect
};

struct ProbeResult {
  ProbeState state = ProbeState::kError;
  double ms = 0;      // from connect() to the verdict
  int err = 0;        // errno of a failed connect (0 otherwise)
  std::string reply;  // first line read when it was not the token (<= 80 chars)
  std::string note;   // for people, e.g. "local policy (EPERM)"
};

struct ProbeOptions {
  // Per-target deadline for connect plus token. REQUIRES: >= 1.
  int timeout_ms = 2000;
  // Sockets in flight at once; capped by the open-file limit. REQUIRES: >= 1.
  int parallel = 256;
};

// Probes every target; result i belongs to target i. Never blocks longer
// than about ceil(targets / parallel) * timeout_ms plus name resolution.
// Thread-compatible; opens and closes its own sockets.
std::vector<ProbeResult> ProbeAll(const std::vector<ProbeTarget>& targets,
                                  const ProbeOptions& options);

// The sockets ProbeAll may keep open at once, given the process's open-file
// limit and the `reserved` descriptors already in use.
int UsableParallel(int wanted, int reserved);

}  // namespace cc::agent
