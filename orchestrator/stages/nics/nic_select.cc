#include "orchestrator/stages/nics/nic_select.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "common/hostlist.h"
#include "orchestrator/stages/nics/nic_recommend.h"

namespace cc {
namespace {

std::string Join(const std::vector<std::string>& v) { return v.empty() ? "" : FoldHostlist(v); }

// Probes on one subnet, by (src, dst).
using ProbeMap = std::map<std::pair<std::string, std::string>, const NicProbe*>;

// a reached b: b's own token came back. No probe (not planned): unknown,
// counted as reached so that a missing test does not invent a fault.
bool Reached(const ProbeMap& pm, const std::string& a, const std::string& b) {
  auto it = pm.find({a, b});
  if (it == pm.end()) return true;
  return it->second->tcp_state == "open" && it->second->answered_by == b;
}

bool DfFailed(const ProbeMap& pm, const std::string& a, const std::string& b) {
  auto it = pm.find({a, b});
  if (it == pm.end()) return false;
  const std::string& s = it->second->mtu_state;
  return s == "lost" || s == "too-big-local";
}

// Removes, one at a time, the node failing with the most partners until
// every remaining pair reaches each other both ways; returns the removed.
std::vector<std::string> PruneUnreachable(const ProbeMap& pm, std::vector<std::string>* nodes) {
  std::vector<std::string> removed;
  for (;;) {
    std::map<std::string, int> fails;
    for (const auto& a : *nodes) {
      for (const auto& b : *nodes) {
        if (a != b && (!Reached(pm, a, b) || !Reached(pm, b, a))) ++fails[a];
      }
    }
    if (fails.empty()) return removed;
    int worst = 0;
    for (const auto& [n, f] : fails) worst = std::max(worst, f);
    std::vector<std::string> out;
    for (const auto& n : *nodes) {
      if (fails.count(n) && fails[n] == worst) out.push_back(n);
    }
    // When every node fails with every other, none can be told good: all
    // go. Otherwise the first of the worst, and look again.
    bool all_fail = out.size() == nodes->size() && worst + 1 == static_cast<int>(nodes->size());
    if (!all_fail) out.resize(1);
    for (const auto& n : out) {
      nodes->erase(std::find(nodes->begin(), nodes->end(), n));
      removed.push_back(n);
    }
  }
}

std::string UnreachableMessage(const ProbeMap& pm, const SubnetMember& m,
                               const std::vector<std::string>& peers) {
  std::vector<std::string> from, to;
  std::string states;
  for (const auto& p : peers) {
    if (p == m.node) continue;
    if (!Reached(pm, p, m.node)) {
      from.push_back(p);
      const NicProbe* pr = pm.at({p, m.node});
      if (states.empty()) {
        bool other = !pr->answered_by.empty() && pr->answered_by != m.node;
        states = pr->tcp_state + (other ? ", answered by " + pr->answered_by : "");
      }
    }
    if (!Reached(pm, m.node, p)) to.push_back(p);
  }
  std::string msg = m.node + ": " + m.nic->name + " " + m.addr;
  if (!from.empty()) msg += " not reached from " + Join(from) + " (" + states + ")";
  if (!to.empty()) msg += std::string(from.empty() ? "" : ";") + " does not reach " + Join(to);
  return msg;
}

// The fix follows the evidence: a configured MTU off the subnet's is set
// back on that interface; with the right MTU configured but full-size DF
// datagrams lost, the path (switch ports) is what drops them.
NicProblem MtuProblem(const ProbeMap& pm, const SubnetMember& m, const SubnetJudgement& j,
                      const std::vector<std::string>& df_bad, bool cfg_off) {
  const std::string& n = m.node;
  const std::string want = j.mtu ? std::to_string(*j.mtu) : "?";
  std::string msg = n + ": " + m.nic->name + " MTU " +
                    (m.nic->mtu ? std::to_string(*m.nic->mtu) : "?") + ", the rest of " + j.cidr +
                    " has " + want;
  if (!df_bad.empty()) {
    const NicProbe* pr = pm.count({n, df_bad[0]}) ? pm.at({n, df_bad[0]}) : pm.at({df_bad[0], n});
    msg += "; " + std::to_string(pr->mtu_bytes) + "-byte DF datagrams fail with " + Join(df_bad) +
           " (" + pr->mtu_state + ")";
  }
  std::string next =
      cfg_off ? "set the MTU of " + m.nic->name + " on " + n + " to " + want + " (ip link set " +
                    m.nic->name + " mtu " + want + ", and in its network configuration)"
              : "set the MTU of the switch ports on the path of " + n + "'s " + m.nic->name +
                    " to at least " + want + ": " + want + "-byte frames are dropped there";
  // Only a configured MTU off the subnet's is the node's own fact; DF
  // datagrams lost on the path are judged from the probes.
  return {n, m.nic->name, "mtu", Outcome::kFail, msg, next, cfg_off};
}

// The subnet's MTU and speed (most common among `reach`), and per node of
// `reach` an "mtu" problem (configured MTU off, or full-size DF datagrams
// failing with most peers), a "speed" warning, or a place among the
// healthy.
void JudgeMtuAndSpeed(const ProbeMap& pm, const std::map<std::string, const SubnetMember*>& of,
                      const std::vector<std::string>& reach, SubnetJudgement& j) {
  std::vector<long long> mtus, speeds;
  for (const auto& n : reach) {
    if (of.at(n)->nic->mtu) mtus.push_back(*of.at(n)->nic->mtu);
    if (of.at(n)->nic->speed_mbps) speeds.push_back(*of.at(n)->nic->speed_mbps);
  }
  j.mtu = MostCommonValue(mtus);
  j.speed_mbps = MostCommonValue(speeds);
  for (const auto& n : reach) {
    const SubnetMember& m = *of.at(n);
    std::vector<std::string> df_bad;
    for (const auto& p : reach) {
      if (p != n && (DfFailed(pm, n, p) || DfFailed(pm, p, n))) df_bad.push_back(p);
    }
    bool cfg_off = m.nic->mtu && j.mtu && *m.nic->mtu != *j.mtu;
    bool df_off = df_bad.size() * 2 > reach.size() - 1;
    if (cfg_off || df_off) {
      j.problems.push_back(MtuProblem(pm, m, j, df_bad, cfg_off));
      continue;
    }
    if (m.nic->speed_mbps && j.speed_mbps && *m.nic->speed_mbps != *j.speed_mbps) {
      j.problems.push_back({n, m.nic->name, "speed", Outcome::kWarn,
                            n + ": " + m.nic->name + " at " + std::to_string(*m.nic->speed_mbps) +
                                " Mb/s, the rest of " + j.cidr + " at " +
                                std::to_string(*j.speed_mbps) + " Mb/s",
                            "check why " + m.nic->name + " on " + n + " links at " +
                                std::to_string(*m.nic->speed_mbps) +
                                " Mb/s (cable, switch port, ethtool " + m.nic->name + ")"});
    }
    j.healthy.push_back(n);
  }
}

struct Membership {
  std::map<std::string, const SubnetMember*> of;  // node -> its member
  std::set<std::string> own_addr;                 // "node addr": a node's own addresses here
  std::set<std::string> unusable;                 // judged no further (a wrong prefix)
};

// One member per node: the first that is up (two addresses of one node on
// one subnet are one interface in practice); j.nodes, j.physical,
// j.meant_for, and the problems of nodes misplaced or missing here.
Membership JudgeMembers(const Subnet& subnet, const std::vector<std::string>& all_nodes,
                        const std::vector<NicProblem>& misplaced, SubnetJudgement& j) {
  Membership mem;
  auto& of = mem.of;
  int physical = 0;
  for (const SubnetMember& m : subnet.members) {
    mem.own_addr.insert(m.node + " " + m.addr);
    auto it = of.find(m.node);
    if (it == of.end()) {
      j.nodes.push_back(m.node);
      of[m.node] = &m;
      physical += m.nic->kind == "physical";
    } else if (!NicIsUp(*it->second->nic) && NicIsUp(*m.nic)) {
      it->second = &m;
    }
  }
  j.physical = physical * 2 > static_cast<int>(j.nodes.size());
  j.meant_for = j.nodes.size();
  std::set<std::string> explained;  // absent nodes whose problem says why
  for (const NicProblem& p : misplaced) {
    j.problems.push_back(p);
    explained.insert(p.node);
    if (p.kind == "subnet") ++j.meant_for;
    if (p.kind == "prefix") mem.unusable.insert(p.node);
  }
  for (const auto& n : all_nodes) {
    if (!of.count(n) && !explained.count(n)) {
      j.problems.push_back({n, "", "missing", Outcome::kFail, n + ": no address on " + j.cidr,
                            "give " + n + " an address on " + j.cidr});
    }
  }
  return mem;
}

// A decoy is judged no further: one address shared by every node (a
// node-local bridge), or a node answering probes of its peers' addresses.
// Names it in j and returns true; duplicates of an address go to j's
// problems and mem.unusable.
bool ExcludeDecoy(const Subnet& subnet, const ProbeMap& pm, Membership& mem, SubnetJudgement& j) {
  AddressSharing sharing = JudgeSharedAddresses(subnet);
  if (!sharing.decoy_addr.empty()) {
    j.exclusion_kind = "same-address";
    j.excluded = "decoy: " + sharing.decoy_addr + " (" + sharing.decoy_nic +
                 ") is the same address on " + Join(sharing.decoy_nodes) +
                 ": a node-local bridge, where each node only reaches itself";
    return true;
  }
  for (const NicProblem& p : sharing.duplicates) {
    j.problems.push_back(p);
    mem.unusable.insert(p.node);
  }
  // A node answering a probe of a peer's address is a decoy, unless the
  // address is its own too (a duplicate, named above).
  std::vector<std::string> self;
  for (const auto& [k, p] : pm) {
    bool own = mem.own_addr.count(p->src + " " + p->addr) > 0;
    if (!p->answered_by.empty() && p->answered_by == p->src && !own) self.push_back(p->src);
  }
  if (self.empty()) return false;
  std::set<std::string> s(self.begin(), self.end());
  j.exclusion_kind = "self-only";
  j.excluded = "decoy: on " + Join({s.begin(), s.end()}) +
               " a probe of a peer's address was answered by the node itself";
  return true;
}

// The usable nodes whose member interface is up; a "down" problem for the
// others.
std::vector<std::string> UpNodes(const Membership& mem, SubnetJudgement& j) {
  std::vector<std::string> up;
  for (const auto& n : j.nodes) {
    if (mem.unusable.count(n)) continue;
    const SubnetMember& m = *mem.of.at(n);
    if (NicIsUp(*m.nic)) {
      up.push_back(n);
      continue;
    }
    j.problems.push_back({n, m.nic->name, "down", Outcome::kFail,
                          n + ": " + m.nic->name + " " + m.addr + " is down (operstate " +
                              (m.nic->operstate.empty() ? "unknown" : m.nic->operstate) + ")",
                          "bring " + m.nic->name + " on " + n + " up (ip link set " + m.nic->name +
                              " up), then check its cable and switch port"});
  }
  return up;
}

}  // namespace

std::vector<const NicProbe*> PointersTo(const std::vector<NicProbe>& probes) {
  std::vector<const NicProbe*> out;
  out.reserve(probes.size());
  for (const NicProbe& p : probes) out.push_back(&p);
  return out;
}

SubnetJudgement JudgeSubnet(const Subnet& subnet, const std::vector<std::string>& all_nodes,
                            const std::vector<NicProbe>& probes,
                            const std::vector<NicProblem>& misplaced) {
  return JudgeSubnetByPointer(subnet, all_nodes, PointersTo(probes), misplaced);
}

NicSelection SelectNics(const std::vector<NodeNics>& nodes, const std::vector<NicProbe>& probes) {
  return SelectNicsByPointer(nodes, PointersTo(probes));
}

SubnetJudgement JudgeSubnetByPointer(const Subnet& subnet,
                                     const std::vector<std::string>& all_nodes,
                                     const std::vector<const NicProbe*>& probes,
                                     const std::vector<NicProblem>& misplaced) {
  SubnetJudgement j;
  j.cidr = subnet.cidr;
  Membership mem = JudgeMembers(subnet, all_nodes, misplaced, j);
  ProbeMap pm;
  for (const NicProbe* p : probes) {
    if (p->subnet != j.cidr) continue;
    pm[{p->src, p->dst}] = p;
  }
  if (ExcludeDecoy(subnet, pm, mem, j)) return j;
  if (j.nodes.size() < 2) {
    j.exclusion_kind = "single-node";
    j.excluded = "only on " + Join(j.nodes) + ": no peer to reach";
    return j;
  }
  const std::vector<std::string> up = UpNodes(mem, j);
  std::vector<std::string> reach = up;
  std::vector<std::string> lost = PruneUnreachable(pm, &reach);
  for (const auto& n : lost) {
    const SubnetMember& m = *mem.of.at(n);
    j.problems.push_back(
        {n, m.nic->name, "unreachable", Outcome::kFail, UnreachableMessage(pm, m, up),
         "check the firewall, routes, cable and switch port of " + m.nic->name + " on " + n});
  }
  if (reach.size() < 2) {
    j.exclusion_kind = up.size() < 2 ? "down" : "no-peer-reached";
    j.excluded = up.size() < 2 ? "link down on " + Join(j.nodes) + " but " + Join(up)
                               : "no two nodes reach each other on it";
    if (up.empty()) j.excluded = "link down on every node (" + Join(j.nodes) + ")";
    return j;
  }
  JudgeMtuAndSpeed(pm, mem.of, reach, j);
  return j;
}

NicSelection SelectNicsByPointer(const std::vector<NodeNics>& nodes,
                                 const std::vector<const NicProbe*>& probes) {
  NicSelection s;
  std::vector<std::string> all;
  for (const auto& n : nodes) all.push_back(n.node);
  NicGrouping grouping = GroupIntoNetworks(nodes);
  const std::vector<Subnet>& subnets = grouping.subnets;
  for (const Subnet& sub : subnets) {
    s.subnets.push_back(JudgeSubnetByPointer(sub, all, probes, grouping.problems[sub.cidr]));
  }
  const SubnetJudgement* best = nullptr;
  auto key = [&all](const SubnetJudgement& j) {
    return std::make_tuple(j.meant_for * 2 > all.size(), j.speed_mbps.value_or(0),
                           j.mtu.value_or(0), j.physical, j.nodes.size(), j.healthy.size());
  };
  for (const SubnetJudgement& j : s.subnets) {
    if (!j.excluded.empty() || j.healthy.size() < 2 || j.healthy.size() * 2 < j.nodes.size()) {
      continue;
    }
    if (best == nullptr || key(j) > key(*best)) best = &j;
  }
  IbChoice ib = ChooseIbHca(nodes);
  s.ib_hca = ib.hca;
  s.ib_gid_index = ib.gid_index;
  s.ib_problems = ib.problems;
  s.notes = ib.notes;
  if (best == nullptr) {
    s.reason = nodes.empty() ? "no nodes"
               : subnets.empty()
                   ? "no interface with a routable address on any node"
                   : "no subnet where at least two, and at least half, of its nodes are up, "
                     "reach each other and agree on the MTU";
    return s;
  }
  s.subnet = best->cidr;
  const Subnet& chosen = subnets[best - s.subnets.data()];
  for (const SubnetMember& m : chosen.members) {
    if (s.nic_of.count(m.node) && NicIsUp(*m.nic) == false) continue;
    s.nic_of[m.node] = m.nic->name;
    s.address_of[m.node] = m.addr;
  }
  s.socket_ifname = SocketIfname(s.nic_of, nodes);
  s.tcp_if_include = best->cidr;
  s.reason = best->cidr + ": on " + std::to_string(best->nodes.size()) + " of " +
             std::to_string(all.size()) + " nodes, healthy on " + Join(best->healthy) +
             (best->speed_mbps ? ", " + std::to_string(*best->speed_mbps) + " Mb/s" : "") +
             (best->mtu ? ", MTU " + std::to_string(*best->mtu) : "") +
             (best->physical ? ", physical NICs" : ", virtual NICs");
  for (const SubnetJudgement& j : s.subnets) {
    if (&j == best || !j.excluded.empty() || j.healthy.size() != all.size()) continue;
    if (best->healthy.size() < all.size()) {
      s.notes.push_back("fallback: " + j.cidr + " works on every node (MTU " +
                        (j.mtu ? std::to_string(*j.mtu) : "?") + ") until " + best->cidr +
                        " is fixed");
    }
  }
  return s;
}

}  // namespace cc
