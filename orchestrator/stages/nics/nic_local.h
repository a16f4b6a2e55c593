// The nics stage on one machine (`make run`, local transport): there is no
// second host to probe, so it lists this host's interfaces and says which
// one it would recommend if every node looked like this one. The real
// recommendation (nic_select.h) needs probes between nodes. Pure.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/stages/nics/nic_inputs.h"

namespace cc {

struct LocalNics {
  // One per interface, loopback left out: "eth0 physical up MTU 1500
  // 10.0.0.5/24".
  std::vector<std::string> interfaces;
  std::string candidate;  // the interface it would pick; "" when none
  std::string summary;    // one line for people: the pick and why, or why none
};

// The candidate is an interface that is up, has an IPv4 or global IPv6
// subnet and is not virtual (bridges, veths, tunnels look alike on every
// node: docker0's 172.17.0.1 is everywhere); among those the fastest, then
// the largest MTU, then the first. Virtual interfaces with an address are
// named as what the nics stage would test as decoys.
LocalNics DescribeLocalNics(const NodeNics& node);

}  // namespace cc
