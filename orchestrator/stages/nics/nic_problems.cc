#include "orchestrator/stages/nics/nic_problems.h"

#include <arpa/inet.h>

#include <algorithm>
#include <optional>
#include <set>

#include "common/hostlist.h"

namespace cc {
namespace {

std::string PrefixOf(const std::string& cidr) {
  auto slash = cidr.find('/');
  return slash == std::string::npos ? "" : cidr.substr(slash + 1);
}

// The member's address as configured, with its prefix length.
std::string FullAddress(const SubnetMember& m) {
  for (const std::string& a : m.nic->addresses) {
    if (AddressPart(a) == m.addr) return a;
  }
  return m.addr;
}

std::set<std::string> NodesOn(const Subnet& s) {
  std::set<std::string> out;
  for (const SubnetMember& m : s.members) out.insert(m.node);
  return out;
}

// On at least half of the nodes, at least two nodes, and not one address
// shared by all (a decoy is no network of the cluster).
bool IsClusterNetwork(const Subnet& s, size_t n_nodes) {
  std::set<std::string> addrs;
  for (const SubnetMember& m : s.members) addrs.insert(m.addr);
  size_t on = NodesOn(s).size();
  return on >= 2 && addrs.size() >= 2 && on * 2 >= n_nodes;
}

// The interface name most members use (ties: the first seen).
std::string UsualNic(const Subnet& s) {
  std::map<std::string, int> count;
  std::string best;
  for (const SubnetMember& m : s.members) {
    if (++count[m.nic->name] > count[best] || best.empty()) best = m.nic->name;
  }
  return best;
}

std::vector<std::string> AddressesOf(const Subnet& s) {
  std::vector<std::string> out;
  for (const SubnetMember& m : s.members) out.push_back(m.addr);
  return out;
}

std::optional<uint32_t> Ipv4(const std::string& addr) {
  in_addr a{};
  if (inet_pton(AF_INET, addr.c_str(), &a) != 1) return std::nullopt;
  return ntohl(a.s_addr);
}

std::string Ipv4Text(uint32_t v) {
  in_addr a{};
  a.s_addr = htonl(v);
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a, buf, sizeof buf);
  return buf;
}

// Moves each wrong-prefix address of a node that lacks the cluster network
// it lies in into that network, with a "prefix" problem.
void FoldWrongPrefixes(const std::vector<size_t>& cluster, std::vector<Subnet>& subnets,
                       std::map<std::string, std::vector<NicProblem>>& problems) {
  std::vector<std::set<std::string>> on(subnets.size());
  for (size_t c : cluster) on[c] = NodesOn(subnets[c]);
  for (size_t i = 0; i < subnets.size(); ++i) {
    if (std::find(cluster.begin(), cluster.end(), i) != cluster.end()) continue;
    auto& members = subnets[i].members;
    for (auto m = members.begin(); m != members.end();) {
      bool moved = false;
      for (size_t c : cluster) {
        Subnet& net = subnets[c];
        std::string q = PrefixOf(net.cidr);
        if (on[c].count(m->node) || SubnetOf(m->addr + "/" + q) != net.cidr) continue;
        std::string now = FullAddress(*m), want = m->addr + "/" + q;
        problems[net.cidr].push_back({m->node, m->nic->name, "prefix", Outcome::kFail,
                                      m->node + ": " + m->nic->name + " " + now +
                                          " has prefix length /" + PrefixOf(now) +
                                          ", the rest of " + net.cidr + " has /" + q,
                                      "set " + m->nic->name + " on " + m->node + " to " + want});
        on[c].insert(m->node);
        net.members.push_back(*m);
        moved = true;
        break;
      }
      m = moved ? members.erase(m) : m + 1;
    }
  }
  subnets.erase(std::remove_if(subnets.begin(), subnets.end(),
                               [](const Subnet& s) { return s.members.empty(); }),
                subnets.end());
}

// A node without the cluster network `net`: a "subnet" problem when the
// interface that carries it elsewhere holds an address of a subnet that is
// no cluster network, else "missing".
NicProblem Absent(const NodeNics& node, const Subnet& net,
                  const std::set<std::string>& cluster_cidrs) {
  std::string usual = UsualNic(net);
  std::string q = PrefixOf(net.cidr);
  for (const NicInfo& nic : node.nics) {
    if (nic.name != usual) continue;
    for (const std::string& a : nic.addresses) {
      auto sub = SubnetOf(a);
      if (!sub || cluster_cidrs.count(*sub)) continue;
      std::string free = FreeAddress(net.cidr, AddressesOf(net), AddressPart(a));
      return {node.node,
              nic.name,
              "subnet",
              Outcome::kFail,
              node.node + ": " + nic.name + " " + a + " is outside " + net.cidr +
                  ", where the other nodes have their " + usual,
              "set " + nic.name + " on " + node.node + " to " +
                  (free.empty() ? "a free address of " + net.cidr : free + "/" + q)};
    }
    std::string free = FreeAddress(net.cidr, AddressesOf(net));
    return {node.node,
            nic.name,
            "missing",
            Outcome::kFail,
            node.node + ": no address on " + net.cidr,
            "add " + (free.empty() ? "a free address of " + net.cidr : free + "/" + q) + " to " +
                nic.name + " on " + node.node};
  }
  return {node.node,
          "",
          "missing",
          Outcome::kFail,
          node.node + ": no address on " + net.cidr,
          "give " + node.node + " an address on " + net.cidr + " (the other nodes have it on " +
              usual + ")"};
}

}  // namespace

NicGrouping GroupIntoNetworks(const std::vector<NodeNics>& nodes) {
  NicGrouping g;
  g.subnets = GroupBySubnet(nodes);
  std::vector<size_t> cluster;
  for (size_t i = 0; i < g.subnets.size(); ++i) {
    if (IsClusterNetwork(g.subnets[i], nodes.size())) cluster.push_back(i);
  }
  std::set<std::string> cluster_cidrs;
  for (size_t c : cluster) cluster_cidrs.insert(g.subnets[c].cidr);
  FoldWrongPrefixes(cluster, g.subnets, g.problems);
  for (const Subnet& net : g.subnets) {
    if (!cluster_cidrs.count(net.cidr)) continue;
    std::set<std::string> on = NodesOn(net);
    for (const NodeNics& n : nodes) {
      if (!on.count(n.node)) g.problems[net.cidr].push_back(Absent(n, net, cluster_cidrs));
    }
  }
  return g;
}

AddressSharing JudgeSharedAddresses(const Subnet& subnet) {
  AddressSharing out;
  size_t on = NodesOn(subnet).size();
  std::vector<std::string> order;
  std::map<std::string, std::vector<const SubnetMember*>> holders;
  for (const SubnetMember& m : subnet.members) {
    auto& h = holders[m.addr];
    if (h.empty()) order.push_back(m.addr);
    bool seen = std::any_of(h.begin(), h.end(), [&](auto* x) { return x->node == m.node; });
    if (!seen) h.push_back(&m);
  }
  for (const std::string& addr : order) {
    const auto& h = holders[addr];
    if (h.size() < 2) continue;
    bool bridges =
        std::all_of(h.begin(), h.end(), [](auto* x) { return x->nic->kind == "bridge"; });
    std::vector<std::string> names;
    for (const SubnetMember* x : h) names.push_back(x->node);
    if (h.size() * 2 > on || bridges) {
      out.decoy_addr = addr;
      out.decoy_nic = h[0]->nic->name;
      out.decoy_nodes = names;
      out.duplicates.clear();
      return out;
    }
    std::string who = FoldHostlist(names);
    std::string free = FreeAddress(subnet.cidr, AddressesOf(subnet));
    for (const SubnetMember* x : h) {
      out.duplicates.push_back(
          {x->node, x->nic->name, "duplicate", Outcome::kFail,
           x->node + ": " + x->nic->name + " " + addr + " is a duplicate address: " + who +
               " all have it on " + subnet.cidr,
           "give " + who + " distinct addresses on " + subnet.cidr + " (they share " + addr +
               (free.empty() ? "" : "; " + free + " is free") + ")"});
    }
  }
  return out;
}

std::string FreeAddress(const std::string& cidr, const std::vector<std::string>& taken,
                        const std::string& host) {
  auto slash = cidr.find('/');
  auto net = Ipv4(cidr.substr(0, slash));
  if (!net || slash == std::string::npos) return "";
  int q = std::stoi(cidr.substr(slash + 1));
  if (q < 1 || q > 30) return "";
  uint32_t hostmask = (uint32_t{1} << (32 - q)) - 1;
  std::set<uint32_t> used;
  for (const std::string& t : taken) {
    if (auto v = Ipv4(t)) used.insert(*v);
  }
  auto usable = [&](uint32_t h) { return h != 0 && h != hostmask && !used.count(*net | h); };
  if (auto h = Ipv4(host); h && usable(*h & hostmask)) return Ipv4Text(*net | (*h & hostmask));
  uint32_t start = used.empty() ? 1 : (*used.rbegin() & hostmask) + 1;
  for (uint32_t h = start; h < hostmask; ++h) {
    if (usable(h)) return Ipv4Text(*net | h);
  }
  for (uint32_t h = 1; h < start && h < hostmask; ++h) {
    if (usable(h)) return Ipv4Text(*net | h);
  }
  return "";
}

}  // namespace cc
