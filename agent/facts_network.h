// The "network" section: every interface under /sys/class/net with its kind
// (physical NIC or one of the virtual kinds that look alike on every node
// and mislead NCCL_SOCKET_IFNAME: docker0, virbr0, veth*), state, speed,
// MTU, MAC, addresses, NUMA node and PCI address.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/sysroot.h"

namespace cc::agent {

// What sysfs tells about one interface, for classification.
struct InterfaceSysfs {
  std::string name;
  bool has_device = false;        // /sys/class/net/X/device (a bus device: NIC)
  bool has_bridge = false;        // X/bridge/
  bool has_bonding = false;       // X/bonding/
  bool has_tun_flags = false;     // X/tun_flags (tun/tap)
  std::string devtype;            // DEVTYPE= in X/uevent ("vlan", "bridge", ...)
  std::optional<long long> type;  // ARPHRD_*: 772 loopback
  std::optional<long long> ifindex;
  std::optional<long long> iflink;  // != ifindex: stacked on or paired with another
};

// "physical", "loopback", "veth", "bridge", "bond", "vlan", "tun" or
// "virtual".
std::string ClassifyInterface(const InterfaceSysfs& s);

// "0000:17:00.0" shaped?
bool LooksLikePciAddress(const std::string& s);

// Fixture file <root>/proc/net/clustercheck-addrs: "ifname addr/prefix" per
// line ('#' comments). Returns ifname -> addresses in file order.
std::map<std::string, std::vector<std::string>> ParseAddressFile(const std::string& text);

// The section. Addresses come from getifaddrs() on the real root and from
// the fixture file otherwise.
nlohmann::json CollectNetworkFacts(const Sysroot& root);

// Names of the interfaces in a network section (for NCCL_SOCKET_IFNAME).
std::vector<std::string> InterfaceNames(const nlohmann::json& network);

}  // namespace cc::agent
