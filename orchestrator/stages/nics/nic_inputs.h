// The nics stage's inputs as plain structs: each node's interfaces and IB
// ports (read from its facts), interfaces grouped by subnet, and what the
// probes between nodes saw. Pure; nic_select.h judges them.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/interned.h"

namespace cc {

struct NicInfo {
  std::string name;
  std::string kind;       // facts_network.h: physical, veth, bridge, ...
  std::string operstate;  // "up", "down", "lowerlayerdown", "unknown", ""
  std::optional<long long> mtu;
  std::optional<long long> speed_mbps;
  std::vector<std::string> addresses;  // "10.42.0.3/24", "fe80::1/64"
};

struct IbPortInfo {
  std::string device;  // mlx5_0
  int port = 1;
  std::string state;       // ACTIVE, DOWN, ...
  std::string link_layer;  // InfiniBand, Ethernet
  std::optional<double> rate_gbps;
  std::optional<int> roce_v2_gid_index;
};

struct NodeNics {
  std::string node;
  std::vector<NicInfo> nics;
  std::vector<IbPortInfo> ib_ports;
};

// From a node's facts ("network" and "rdma" sections); missing or
// malformed parts are left empty.
NodeNics NodeNicsFromFacts(const std::string& node, const nlohmann::json& facts);

// Up for traffic: operstate "up", or "unknown" (virtual links that do not
// report it) with a known address.
bool NicIsUp(const NicInfo& n);

// "10.42.0.3/24" -> "10.42.0.0/24"; "2001:db8::5/64" -> "2001:db8::/64".
// nullopt for unparsable text, loopback (127/8, ::1) and IPv6 link-local
// (fe80::/10), which never join nodes.
std::optional<std::string> SubnetOf(const std::string& cidr);
// "10.42.0.3/24" -> "10.42.0.3".
std::string AddressPart(const std::string& cidr);

// The most common value; ties go to the larger (a jumbo-frame network with
// half its nodes misconfigured is still meant to be jumbo). nullopt when
// empty.
std::optional<long long> MostCommonValue(const std::vector<long long>& values);

// One interface of one node on a subnet.
struct SubnetMember {
  std::string node;
  const NicInfo* nic = nullptr;  // points into the NodeNics it came from
  std::string addr;              // without prefix
};

struct Subnet {
  std::string cidr;                   // "10.42.0.0/24"
  std::vector<SubnetMember> members;  // node order of the input, one per address
};

// Every subnet with at least one member, in order of first appearance.
// REQUIRES: `nodes` outlives the result.
std::vector<Subnet> GroupBySubnet(const std::vector<NodeNics>& nodes);

// What one sender saw of one receiver's address on one subnet.
// A record per probe, N(N-1) per subnet: its values are Interned (issue
// 14); `note` alone may be unique to it.
struct NicProbe {
  Interned src;      // sending node
  Interned dst;      // receiving node
  Interned subnet;   // "10.42.0.0/24"
  Interned addr;     // dst's address probed
  Interned src_nic;  // the sender's interface on the subnet
  Interned dst_nic;  // the receiver's interface holding addr
  // TCP: the agent's probe state (port_probe.h) and whose token answered
  // ("" when none did).
  Interned tcp_state;
  Interned answered_by;
  // DF datagrams: bytes tried (IP packet size; 0 = not tried), and "ok",
  // "lost" (the small one came back, the full-size one did not),
  // "no-reply" (neither came back), "too-big-local" (the sender's own MTU
  // refused it: EMSGSIZE), "error".
  int mtu_bytes = 0;
  Interned mtu_state;
  // Why it failed, when it did: a few distinct texts in a run (interned,
  // as the fields above: at 256 nodes there are 196,000 probes).
  Interned note;
};

}  // namespace cc
