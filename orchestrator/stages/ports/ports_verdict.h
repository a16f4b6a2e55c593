// Attribution of the ports stage: from the matrix of (sender, receiver,
// port) states to the verdicts an operator acts on, each naming the node
// (or pair) and the firewall chain to look at. Pure: no I/O; thread-safe.
//
// Kinds, worst and broadest first; a failure explained by one verdict is
// not repeated by a narrower one:
//   nothing         every probe failed: no node reaches any other
//   isolated        a node reaches no peer and no peer reaches it
//   sender          a node reaches no peer on any port (its OUTPUT/routing)
//   receiver        a node blocks a port from every peer (its INPUT)
//   ephemeral       a node blocks (part of) its ephemeral range from every
//                   peer: NCCL's data sockets live there
//   port-everywhere a port fails on every receiver (a cluster-wide policy)
//   pair            A <-> B fail both ways while both work with others
//   one-way         A -> B fails but B -> A works (A's OUTPUT or B's INPUT)
//   wrong-host      a node's address is answered by another node
//   in-use          (warn) a port is held by another process on a node
// A "receiver" or "sender" verdict needs at least two peers to compare;
// with two nodes, failures are pair or one-way verdicts.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/outcome.h"
#include "orchestrator/stages/ports/ports_plan.h"

namespace cc {

// One stored probe, as attribution needs it.
struct PortCell {
  std::string src;
  std::string dst;
  int port = 0;
  PortKind kind = PortKind::kListed;
  std::string state;  // JudgeProbe's state
  Outcome outcome = Outcome::kError;
};

struct PortVerdict {
  std::string kind;
  Outcome severity = Outcome::kFail;
  std::vector<std::string> nodes;                          // the nodes it names, in run order
  std::vector<int> ports;                                  // the ports involved, ascending
  std::vector<std::pair<std::string, std::string>> pairs;  // src, dst
  std::string message;                                     // one line for people, nodes folded
  std::string next_step;                                   // "open tcp 32768-60999 on node6"
  nlohmann::json evidence = nlohmann::json::object();
};

// `nodes` in run order (senders and receivers of the stage); cells with
// outcome error/hang/skip are ignored. `ephemeral_ranges` holds each
// receiver's net.ipv4.ip_local_port_range, for the ephemeral message.
std::vector<PortVerdict> AttributePorts(
    const std::vector<std::string>& nodes, const std::vector<PortCell>& cells,
    const std::map<std::string, std::pair<int, int>>& ephemeral_ranges);

// "tcp/22,29500" or "tcp/29500"; "" for none.
std::string FormatTcpPorts(const std::vector<int>& ports);

}  // namespace cc
