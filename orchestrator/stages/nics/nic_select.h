// The nics stage's judgement, pure (docs/architecture.md, issue 6): per subnet,
// which nodes are down, unreachable, off in MTU or speed, and whether the
// subnet is a decoy (the same address on every node, like docker0's
// 172.17.0.1, or a network where each node reaches only itself); then the
// network NCCL and MPI should use, and the values to set (nic_recommend.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "orchestrator/stages/nics/nic_inputs.h"
#include "orchestrator/stages/nics/nic_problems.h"

namespace cc {

struct SubnetJudgement {
  std::string cidr;
  std::vector<std::string> nodes;    // nodes with an address here, input order
  std::vector<std::string> healthy;  // up, reach each other, MTU as the rest
  // Nodes on it plus those with an address meant for it elsewhere
  // ("subnet" problems): how many nodes the network is meant for.
  size_t meant_for = 0;
  std::optional<long long> mtu;         // most common MTU (ties: the larger)
  std::optional<long long> speed_mbps;  // most common known speed
  bool physical = false;                // most of its interfaces are physical NICs
  // Why the subnet is no candidate at all ("" when it is one), and the
  // kind: "same-address", "self-only", "single-node", "down",
  // "no-peer-reached".
  std::string excluded;
  std::string exclusion_kind;
  std::vector<NicProblem> problems;  // per node, for nodes listed in `nodes`
};

// Judges one subnet from its members and the probes on it. `all_nodes`
// names the cluster's nodes; `misplaced` are the subnet's "prefix",
// "subnet" and "missing" problems from GroupIntoNetworks (nic_problems.h).
// Nodes without an address here and without such a problem get a generic
// "missing" problem. Nodes sharing an address that is no decoy get a
// "duplicate" problem and are judged no further.
SubnetJudgement JudgeSubnetByPointer(const Subnet& subnet,
                                     const std::vector<std::string>& all_nodes,
                                     const std::vector<const NicProbe*>& probes,
                                     const std::vector<NicProblem>& misplaced = {});
SubnetJudgement JudgeSubnet(const Subnet& subnet, const std::vector<std::string>& all_nodes,
                            const std::vector<NicProbe>& probes,
                            const std::vector<NicProblem>& misplaced = {});

struct NicSelection {
  std::optional<std::string> subnet;              // the chosen network's CIDR
  std::string reason;                             // why this one, or why none
  std::map<std::string, std::string> nic_of;      // node -> interface there
  std::map<std::string, std::string> address_of;  // node -> its address there
  std::string socket_ifname;                      // NCCL_SOCKET_IFNAME ("" none)
  std::string ib_hca;                             // NCCL_IB_HCA ("" none)
  std::optional<int> ib_gid_index;                // NCCL_IB_GID_INDEX (RoCE only)
  // Open MPI btl_tcp_if_include. oob_tcp_if_include is no advice of the
  // nics stage: it must name a network the mpirun host shares with the
  // nodes, which only the mpi stage knows.
  std::string tcp_if_include;
  std::vector<SubnetJudgement> subnets;  // every subnet seen, input order
  std::vector<NicProblem> ib_problems;
  std::vector<std::string> notes;  // fallbacks and caveats for people
};

// The recommendation. A subnet is eligible when it is no decoy, at least
// two nodes are healthy on it and at least half of the nodes on it are.
// A network meant for most of the cluster's nodes (on them, or misplaced
// there: nic_problems.h) beats one that is not, so that one node's mistake
// never moves the choice to another network; then the fastest wins, then
// the largest MTU, then physical NICs over virtual ones, then the one on
// the most nodes, then the most healthy nodes, then the first seen. Bad
// nodes on the chosen subnet are its problems; the rest still get its
// address (later stages then show the same fault); a network that works on
// every node while the chosen one does not is a note ("fallback: ...").
// No eligible subnet: `subnet` is empty and `reason` says why.
NicSelection SelectNicsByPointer(const std::vector<NodeNics>& nodes,
                                 const std::vector<const NicProbe*>& probes);
NicSelection SelectNics(const std::vector<NodeNics>& nodes, const std::vector<NicProbe>& probes);

// Pointers to each of `probes`, for the ...ByPointer forms above, which
// judge probes where they lie (LatestProbes) instead of a copy.
std::vector<const NicProbe*> PointersTo(const std::vector<NicProbe>& probes);

}  // namespace cc
