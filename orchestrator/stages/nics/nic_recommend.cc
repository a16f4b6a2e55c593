#include "orchestrator/stages/nics/nic_recommend.h"

#include <algorithm>
#include <set>

#include "common/hostlist.h"

namespace cc {

using Json = nlohmann::json;

namespace {

bool MatchesAny(const std::string& name, const std::vector<std::string>& patterns, bool exact) {
  for (const auto& p : patterns) {
    if (exact ? name == p : name.rfind(p, 0) == 0) return true;
  }
  return false;
}

// Every node's addressed interfaces that match the patterns are exactly its
// chosen one.
bool SelectsOnlyChosen(const std::vector<std::string>& patterns, bool exact,
                       const std::map<std::string, std::string>& nic_of,
                       const std::vector<NodeNics>& nodes) {
  for (const NodeNics& n : nodes) {
    auto chosen = nic_of.find(n.node);
    if (chosen == nic_of.end()) continue;
    for (const NicInfo& nic : n.nics) {
      bool match = MatchesAny(nic.name, patterns, exact);
      if (nic.name == chosen->second) {
        if (!match) return false;
      } else if (match && !nic.addresses.empty()) {
        return false;
      }
    }
  }
  return true;
}

std::string CommaList(const std::vector<std::string>& v, const std::string& lead = "") {
  std::string out = lead;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + v[i];
  return out;
}

}  // namespace

std::string SocketIfname(const std::map<std::string, std::string>& nic_of,
                         const std::vector<NodeNics>& nodes) {
  std::set<std::string> set;
  for (const auto& [node, nic] : nic_of) set.insert(nic);
  if (set.empty()) return "";
  std::vector<std::string> names(set.begin(), set.end());
  std::string prefix = names[0];
  for (const auto& n : names) {
    size_t k = 0;
    while (k < prefix.size() && k < n.size() && prefix[k] == n[k]) ++k;
    prefix.resize(k);
  }
  if (!prefix.empty() && SelectsOnlyChosen({prefix}, false, nic_of, nodes)) return prefix;
  if (SelectsOnlyChosen(names, false, nic_of, nodes)) return CommaList(names);
  return CommaList(names, "=");
}

IbChoice ChooseIbHca(const std::vector<NodeNics>& nodes) {
  IbChoice c;
  bool any_ib = false;
  for (const NodeNics& n : nodes) {
    for (const IbPortInfo& p : n.ib_ports)
      any_ib |= p.state == "ACTIVE" && p.link_layer == "InfiniBand";
  }
  const std::string layer = any_ib ? "InfiniBand" : "Ethernet";
  // port name -> nodes where it is active; nodes that have ports of the layer.
  std::map<std::string, std::vector<std::string>> active;
  std::map<std::string, std::map<std::string, const IbPortInfo*>> port_of;
  std::vector<std::string> with_ports;
  for (const NodeNics& n : nodes) {
    bool has = false;
    for (const IbPortInfo& p : n.ib_ports) {
      if (p.link_layer != layer) continue;
      has = true;
      std::string name = p.device + ":" + std::to_string(p.port);
      port_of[n.node][name] = &p;
      if (p.state == "ACTIVE") active[name].push_back(n.node);
    }
    if (has) with_ports.push_back(n.node);
  }
  if (active.empty()) {
    c.notes.push_back("no active IB or RoCE port on any node: NCCL uses its socket transport");
    return c;
  }
  std::vector<std::string> chosen;
  std::map<int, int> gid_count;
  for (const auto& [name, on] : active) {
    if (on.size() * 2 < with_ports.size()) {
      c.notes.push_back(name + " is active only on " + FoldHostlist(on) + ": left out");
      continue;
    }
    chosen.push_back(name);
    for (const auto& node : with_ports) {
      auto it = port_of[node].find(name);
      if (std::find(on.begin(), on.end(), node) == on.end()) {
        std::string state = it == port_of[node].end() ? "absent" : it->second->state;
        c.problems.push_back({node, name, "ib", Outcome::kFail,
                              node + ": " + name + " is " + (state.empty() ? "?" : state) +
                                  ", ACTIVE on " + FoldHostlist(on)});
      } else if (layer == "Ethernet" && it->second->roce_v2_gid_index) {
        ++gid_count[*it->second->roce_v2_gid_index];
      }
    }
  }
  c.hca = CommaList(chosen);
  if (layer == "Ethernet") {
    int best_n = 0;
    for (const auto& [idx, n] : gid_count) {
      if (n > best_n) {
        c.gid_index = idx;
        best_n = n;
      }
    }
    if (gid_count.size() > 1) {
      c.notes.push_back("RoCE v2 GID index differs between nodes; " + std::to_string(*c.gid_index) +
                        " is the most common");
    }
    if (!c.gid_index)
      c.notes.push_back("RoCE ports without a RoCE v2 GID: NCCL_IB_GID_INDEX unset");
  }
  return c;
}

std::vector<std::string> EnvLines(const NicSelection& s) {
  std::vector<std::string> out;
  auto line = [&out](const std::string& name, const std::string& v, const std::string& why) {
    out.push_back(v.empty() ? "# " + name + " not set: " + why : "export " + name + "=" + v);
  };
  line("NCCL_SOCKET_IFNAME", s.socket_ifname, s.reason);
  line("NCCL_IB_HCA", s.ib_hca, "no active IB/RoCE port");
  if (s.ib_gid_index) line("NCCL_IB_GID_INDEX", std::to_string(*s.ib_gid_index), "");
  line("OMPI_MCA_btl_tcp_if_include", s.tcp_if_include, "no network selected");
  if (!s.tcp_if_include.empty()) out.push_back("# " + std::string(kOobNote));
  return out;
}

Json SelectionJson(const NicSelection& s) {
  auto problems = [](const std::vector<NicProblem>& ps) {
    Json a = Json::array();
    for (const NicProblem& p : ps) {
      a.push_back({{"node", p.node},
                   {"nic", p.nic},
                   {"kind", p.kind},
                   {"outcome", OutcomeName(p.outcome)},
                   {"message", p.message},
                   {"next_step", p.next_step}});
    }
    return a;
  };
  Json subnets = Json::array();
  for (const SubnetJudgement& j : s.subnets) {
    subnets.push_back({{"subnet", j.cidr},
                       {"nodes", j.nodes},
                       {"healthy", j.healthy},
                       {"mtu", j.mtu ? Json(*j.mtu) : Json(nullptr)},
                       {"speed_mbps", j.speed_mbps ? Json(*j.speed_mbps) : Json(nullptr)},
                       {"physical", j.physical},
                       {"excluded", j.excluded},
                       {"exclusion_kind", j.exclusion_kind},
                       {"problems", problems(j.problems)}});
  }
  return {{"subnet", s.subnet ? Json(*s.subnet) : Json(nullptr)},
          {"reason", s.reason},
          {"nic_of", s.nic_of},
          {"address_of", s.address_of},
          {"NCCL_SOCKET_IFNAME", s.socket_ifname},
          {"NCCL_IB_HCA", s.ib_hca},
          {"NCCL_IB_GID_INDEX", s.ib_gid_index ? Json(*s.ib_gid_index) : Json(nullptr)},
          {"btl_tcp_if_include", s.tcp_if_include},
          {"mpi_note", kOobNote},
          {"env_lines", EnvLines(s)},
          {"subnets", subnets},
          {"ib_problems", problems(s.ib_problems)},
          {"notes", s.notes}};
}

NetworkChoice NetworkChoiceOf(const NicSelection& s) {
  NetworkChoice c;
  c.nccl_env = {{"NCCL_SOCKET_IFNAME", s.socket_ifname},
                {"NCCL_IB_HCA", s.ib_hca},
                {"NCCL_IB_GID_INDEX", s.ib_gid_index ? std::to_string(*s.ib_gid_index) : ""}};
  // No oob_tcp_if_include: the mpi stage chooses it (kOobNote).
  c.btl_tcp_if_include = s.tcp_if_include;
  c.mpi_note = kOobNote;
  c.address_of = s.address_of;
  return c;
}

}  // namespace cc
