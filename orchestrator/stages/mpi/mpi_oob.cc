#include "orchestrator/stages/mpi/mpi_oob.h"

#include <arpa/inet.h>

#include <cstdint>

#include "common/hostlist.h"

namespace cc {
namespace {

bool ParseIpv4(const std::string& s, uint32_t* out) {
  in_addr a{};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) return false;
  *out = ntohl(a.s_addr);
  return true;
}

uint32_t Mask(int prefix_len) { return prefix_len == 0 ? 0 : ~uint32_t{0} << (32 - prefix_len); }

bool IsLoopback(const LocalInterface& i) {
  uint32_t a = 0;
  return ParseIpv4(i.address, &a) && (a >> 24) == 127;
}

// The nodes of `addresses` that `iface`'s subnet does not hold.
std::vector<std::string> Outside(const LocalInterface& iface,
                                 const std::map<std::string, std::string>& addresses) {
  std::vector<std::string> out;
  for (const auto& [node, addr] : addresses) {
    if (!InSubnet(addr, iface)) out.push_back(node);
  }
  return out;
}

// The first interface whose subnet holds every address; nullptr if none.
const LocalInterface* Sharing(const std::vector<LocalInterface>& ifaces,
                              const std::map<std::string, std::string>& addresses) {
  if (addresses.empty()) return nullptr;
  for (const LocalInterface& i : ifaces) {
    if (IsLoopback(i) || Ipv4Network(i.address, i.prefix_len).empty()) continue;
    if (Outside(i, addresses).empty()) return &i;
  }
  return nullptr;
}

std::string Describe(const LocalInterface& i) {
  return i.name + " (" + i.address + "/" + std::to_string(i.prefix_len) + ")";
}

}  // namespace

std::string Ipv4Network(const std::string& address, int prefix_len) {
  uint32_t a = 0;
  if (prefix_len < 0 || prefix_len > 32 || !ParseIpv4(address, &a)) return "";
  in_addr n{};
  n.s_addr = htonl(a & Mask(prefix_len));
  char buf[INET_ADDRSTRLEN];
  if (!inet_ntop(AF_INET, &n, buf, sizeof buf)) return "";
  return std::string(buf) + "/" + std::to_string(prefix_len);
}

bool InSubnet(const std::string& address, const LocalInterface& iface) {
  uint32_t a = 0, b = 0;
  if (iface.prefix_len < 0 || iface.prefix_len > 32) return false;
  if (!ParseIpv4(address, &a) || !ParseIpv4(iface.address, &b)) return false;
  return (a & Mask(iface.prefix_len)) == (b & Mask(iface.prefix_len));
}

OobChoice ChooseOobNetwork(const OobInputs& in) {
  OobChoice c;
  if (!in.setting.empty()) {
    c.value = in.setting;
    c.source = "setting";
    c.why = "[stages.mpi] oob_tcp_if_include = \"" + in.setting + "\" (the operator's choice)";
    return c;
  }
  if (const LocalInterface* i = Sharing(in.interfaces, in.inventory_addresses)) {
    c.value = Ipv4Network(i->address, i->prefix_len);
    c.source = "inventory-addresses";
    c.why = "this machine (where mpirun runs) has " + Describe(*i) +
            " on the network of every node's inventory address, the one its own ssh uses";
    return c;
  }
  if (const LocalInterface* i = Sharing(in.interfaces, in.data_addresses)) {
    c.value = Ipv4Network(i->address, i->prefix_len);
    c.source = "data-addresses";
    c.why = "this machine (where mpirun runs) has " + Describe(*i) +
            " on the data network of every node; no interface of it is on a subnet with "
            "every inventory address";
    return c;
  }
  c.source = "none";
  std::vector<std::string> unresolved;
  for (const auto& [node, addr] : in.inventory_addresses) {
    if (addr.empty()) unresolved.push_back(node);
  }
  c.why =
      "no interface of this machine (where mpirun runs) is on one subnet with every node"
      " (routed networks?), so oob_tcp_if_include is left to Open MPI, which tries every "
      "interface";
  if (!unresolved.empty()) {
    c.why += "; no IPv4 address for " + FoldHostlist(unresolved);
  }
  return c;
}

nlohmann::json OobChoice::ToJson() const {
  return {{"oob_tcp_if_include", value}, {"source", source}, {"why", why}};
}

}  // namespace cc
