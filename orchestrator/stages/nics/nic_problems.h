// Where one node's addressing departs from the cluster's networks (issue
// 17), pure. A network on most nodes is the cluster's network, and one
// node's mistake must not move the recommendation off it: the mistake is a
// problem of that node, with the fix, and the network stays a candidate.
//   - "prefix": the node's address lies in a cluster network but with
//     another prefix length (10.42.0.3/16 where the rest have /24). The
//     address is counted, and probed, on the cluster network.
//   - "subnet": a node without the network holds, on the interface that
//     carries it on the other nodes, an address of a subnet no other node
//     has (10.42.1.3/24 on eth0 where the rest have 10.42.0.x/24 on eth0).
//   - "duplicate": a few nodes share one address (two nodes with
//     10.42.0.5): who answers depends on ARP, so none of them is usable.
//   - "missing": the node has no address there at all.
// A decoy is not a duplicate: the same address on most of a subnet's nodes
// (docker0's 172.17.0.1 everywhere), or shared by bridges only, is
// node-local and stays excluded quietly (nic_select.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "orchestrator/stages/nics/nic_inputs.h"

namespace cc {

struct NicProblem {
  std::string node;
  std::string nic;  // interface ("" when the node has none there)
  // "missing", "prefix", "subnet", "duplicate", "down", "unreachable",
  // "mtu", "speed", "ib"
  std::string kind;
  Outcome outcome = Outcome::kFail;
  std::string message;    // names the node, the interface and the reason
  std::string next_step;  // the fix: "set eth0 on node3 to 10.42.0.3/24"
  // Read from the node's own facts (its configured MTU, its addresses, its
  // link state), not judged from probes: a retest cannot change it
  // (nics_confirm.h PlanNicsRetests).
  bool from_facts = false;
};

// Subnets as GroupBySubnet makes them, except that an address with a wrong
// prefix length is moved into the cluster network it lies in (a subnet
// left without members is dropped), and per cluster network (by CIDR) its
// "prefix", "subnet" and "missing" problems. A cluster network: a subnet
// with at least two distinct addresses on at least half of the nodes.
// REQUIRES: `nodes` outlives the result.
struct NicGrouping {
  std::vector<Subnet> subnets;
  std::map<std::string, std::vector<NicProblem>> problems;
};
NicGrouping GroupIntoNetworks(const std::vector<NodeNics>& nodes);

// How a subnet's addresses are shared between nodes. `decoy_addr` is set
// when one address is on more than half of the subnet's nodes, or shared
// by bridges only (the subnet is then no candidate); otherwise every node
// sharing an address with another gets a "duplicate" problem.
struct AddressSharing {
  std::string decoy_addr;  // "" when there is no decoy
  std::string decoy_nic;   // its interface on the first node holding it
  std::vector<std::string> decoy_nodes;
  std::vector<NicProblem> duplicates;
};
AddressSharing JudgeSharedAddresses(const Subnet& subnet);

// An IPv4 address of `cidr` that none of `taken` holds, preferring the one
// with `host`'s host part ("10.42.0.0/24", host "10.43.0.3" -> "10.42.0.3"),
// else the first free one after the highest taken. "" for IPv6 or when
// none is free.
std::string FreeAddress(const std::string& cidr, const std::vector<std::string>& taken,
                        const std::string& host = "");

}  // namespace cc
