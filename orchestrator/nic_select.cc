#include "orchestrator/nic_select.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "common/hostlist.h"
#include "orchestrator/nic_recommend.h"

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

}  // namespace

SubnetJudgement JudgeSubnet(const Subnet& subnet, const std::vector<std::string>& all_nodes,
                            const std::vector<NicProbe>& probes) {
  SubnetJudgement j;
  j.cidr = subnet.cidr;
  // One member per node: the first that is up (two addresses of one node on
  // one subnet are one interface in practice).
  std::map<std::string, const SubnetMember*> of;
  std::map<std::string, std::vector<std::string>> nodes_of_addr;
  int physical = 0;
  for (const SubnetMember& m : subnet.members) {
    nodes_of_addr[m.addr].push_back(m.node);
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
  for (const auto& n : all_nodes) {
    if (!of.count(n)) {
      j.problems.push_back({n, "", "missing", Outcome::kFail, n + ": no address on " + j.cidr});
    }
  }
  for (const auto& [addr, ns] : nodes_of_addr) {
    std::set<std::string> distinct(ns.begin(), ns.end());
    if (distinct.size() < 2) continue;
    j.exclusion_kind = "same-address";
    j.excluded = "decoy: " + addr + " (" + of[ns[0]]->nic->name + ") is the same address on " +
                 Join({distinct.begin(), distinct.end()}) +
                 ": a node-local bridge, where each node only reaches itself";
    return j;
  }
  ProbeMap pm;
  for (const NicProbe& p : probes) {
    if (p.subnet != j.cidr) continue;
    pm[{p.src, p.dst}] = &p;
  }
  std::vector<std::string> self;
  for (const auto& [k, p] : pm) {
    if (!p->answered_by.empty() && p->answered_by == p->src) self.push_back(p->src);
  }
  if (!self.empty()) {
    std::set<std::string> s(self.begin(), self.end());
    j.exclusion_kind = "self-only";
    j.excluded = "decoy: on " + Join({s.begin(), s.end()}) +
                 " a probe of a peer's address was answered by the node itself";
    return j;
  }
  if (j.nodes.size() < 2) {
    j.exclusion_kind = "single-node";
    j.excluded = "only on " + Join(j.nodes) + ": no peer to reach";
    return j;
  }
  std::vector<std::string> up;
  for (const auto& n : j.nodes) {
    const SubnetMember& m = *of[n];
    if (NicIsUp(*m.nic)) {
      up.push_back(n);
    } else {
      j.problems.push_back({n, m.nic->name, "down", Outcome::kFail,
                            n + ": " + m.nic->name + " " + m.addr + " is down (operstate " +
                                (m.nic->operstate.empty() ? "unknown" : m.nic->operstate) + ")"});
    }
  }
  std::vector<std::string> reach = up;
  std::vector<std::string> lost = PruneUnreachable(pm, &reach);
  for (const auto& n : lost) {
    j.problems.push_back(
        {n, of[n]->nic->name, "unreachable", Outcome::kFail, UnreachableMessage(pm, *of[n], up)});
  }
  if (reach.size() < 2) {
    j.exclusion_kind = up.size() < 2 ? "down" : "no-peer-reached";
    j.excluded = up.size() < 2 ? "link down on " + Join(j.nodes) + " but " + Join(up)
                               : "no two nodes reach each other on it";
    if (up.empty()) j.excluded = "link down on every node (" + Join(j.nodes) + ")";
    return j;
  }
  std::vector<long long> mtus, speeds;
  for (const auto& n : reach) {
    if (of[n]->nic->mtu) mtus.push_back(*of[n]->nic->mtu);
    if (of[n]->nic->speed_mbps) speeds.push_back(*of[n]->nic->speed_mbps);
  }
  j.mtu = MostCommonValue(mtus);
  j.speed_mbps = MostCommonValue(speeds);
  for (const auto& n : reach) {
    const SubnetMember& m = *of[n];
    std::vector<std::string> df_bad;
    for (const auto& p : reach) {
      if (p != n && (DfFailed(pm, n, p) || DfFailed(pm, p, n))) df_bad.push_back(p);
    }
    bool cfg_off = m.nic->mtu && j.mtu && *m.nic->mtu != *j.mtu;
    bool df_off = df_bad.size() * 2 > reach.size() - 1;
    if (cfg_off || df_off) {
      std::string msg = n + ": " + m.nic->name + " MTU " +
                        (m.nic->mtu ? std::to_string(*m.nic->mtu) : "?") + ", the rest of " +
                        j.cidr + " has " + (j.mtu ? std::to_string(*j.mtu) : "?");
      if (!df_bad.empty()) {
        const NicProbe* pr = pm.count({n, df_bad[0]}) ? pm.at({n, df_bad[0]}) : pm.at({df_bad[0], n});
        msg += "; " + std::to_string(pr->mtu_bytes) + "-byte DF datagrams fail with " +
               Join(df_bad) + " (" + pr->mtu_state + ")";
      }
      j.problems.push_back({n, m.nic->name, "mtu", Outcome::kFail, msg});
      continue;
    }
    if (m.nic->speed_mbps && j.speed_mbps && *m.nic->speed_mbps != *j.speed_mbps) {
      j.problems.push_back({n, m.nic->name, "speed", Outcome::kWarn,
                            n + ": " + m.nic->name + " at " + std::to_string(*m.nic->speed_mbps) +
                                " Mb/s, the rest of " + j.cidr + " at " +
                                std::to_string(*j.speed_mbps) + " Mb/s"});
    }
    j.healthy.push_back(n);
  }
  return j;
}

NicSelection SelectNics(const std::vector<NodeNics>& nodes, const std::vector<NicProbe>& probes) {
  NicSelection s;
  std::vector<std::string> all;
  for (const auto& n : nodes) all.push_back(n.node);
  std::vector<Subnet> subnets = GroupBySubnet(nodes);
  for (const Subnet& sub : subnets) s.subnets.push_back(JudgeSubnet(sub, all, probes));
  const SubnetJudgement* best = nullptr;
  auto key = [](const SubnetJudgement& j) {
    return std::make_tuple(j.nodes.size(), j.speed_mbps.value_or(0), j.mtu.value_or(0),
                           j.physical, j.healthy.size());
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
