#include "orchestrator/stages/nics/nic_local.h"

namespace cc {
namespace {

bool HasSubnet(const NicInfo& n) {
  for (const auto& a : n.addresses) {
    if (SubnetOf(a)) return true;
  }
  return false;
}

std::string Describe(const NicInfo& n) {
  std::string s = n.name + " " + (n.kind.empty() ? "?" : n.kind) + " " +
                  (n.operstate.empty() ? "state?" : n.operstate);
  if (n.mtu) s += " MTU " + std::to_string(*n.mtu);
  if (n.speed_mbps) s += " " + std::to_string(*n.speed_mbps) + " Mb/s";
  for (const auto& a : n.addresses) {
    if (SubnetOf(a)) s += " " + a;
  }
  return s;
}

// Whether a beats b as the candidate: faster, then larger MTU.
bool Better(const NicInfo& a, const NicInfo& b) {
  long long sa = a.speed_mbps.value_or(0), sb = b.speed_mbps.value_or(0);
  if (sa != sb) return sa > sb;
  return a.mtu.value_or(0) > b.mtu.value_or(0);
}

}  // namespace

LocalNics DescribeLocalNics(const NodeNics& node) {
  LocalNics out;
  const NicInfo* best = nullptr;
  std::vector<std::string> decoys;
  for (const auto& n : node.nics) {
    if (n.kind == "loopback") continue;
    out.interfaces.push_back(Describe(n));
    if (!NicIsUp(n) || !HasSubnet(n)) continue;
    if (n.kind != "physical" && n.kind != "bond" && n.kind != "vlan") {
      decoys.push_back(n.name);
      continue;
    }
    if (best == nullptr || Better(n, *best)) best = &n;
  }
  std::string decoy_note;
  if (!decoys.empty()) {
    decoy_note = "; ";
    for (size_t i = 0; i < decoys.size(); ++i) decoy_note += (i ? ", " : "") + decoys[i];
    decoy_note += " virtual: a cluster run tests such interfaces as decoys";
  }
  if (best == nullptr) {
    out.summary = "no physical interface with an address is up here" + decoy_note +
                  "; on a cluster the nics stage picks the network the nodes "
                  "reach each other on";
    return out;
  }
  out.candidate = best->name;
  out.summary = "would recommend NCCL_SOCKET_IFNAME=" + best->name +
                " if every node looked like this one (" + Describe(*best) + ")" + decoy_note +
                "; on a cluster the nics stage proves it with probes between the nodes";
  return out;
}

}  // namespace cc
