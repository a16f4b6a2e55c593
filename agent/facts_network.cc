#include "agent/facts_network.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>

#include <cctype>
#include <sstream>

namespace cc::agent {

using nlohmann::json;

namespace {

constexpr long long kArphrdLoopback = 772;

std::string UeventValue(const std::string& uevent, const std::string& key) {
  std::istringstream in(uevent);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + "=", 0) == 0) return Trim(line.substr(key.size() + 1));
  }
  return "";
}

int PrefixLength(const sockaddr* mask) {
  if (mask == nullptr) return 0;
  const unsigned char* p = nullptr;
  size_t n = 0;
  if (mask->sa_family == AF_INET) {
    p = reinterpret_cast<const unsigned char*>(
        &reinterpret_cast<const sockaddr_in*>(mask)->sin_addr);
    n = 4;
  } else if (mask->sa_family == AF_INET6) {
    p = reinterpret_cast<const unsigned char*>(
        &reinterpret_cast<const sockaddr_in6*>(mask)->sin6_addr);
    n = 16;
  }
  int bits = 0;
  for (size_t i = 0; i < n; ++i) bits += __builtin_popcount(p[i]);
  return bits;
}

std::map<std::string, std::vector<std::string>> SystemAddresses() {
  std::map<std::string, std::vector<std::string>> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr) continue;
    int fam = a->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    char buf[INET6_ADDRSTRLEN] = {0};
    const void* src =
        fam == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr);
    if (inet_ntop(fam, src, buf, sizeof buf) == nullptr) continue;
    out[a->ifa_name].push_back(std::string(buf) + "/" +
                               std::to_string(PrefixLength(a->ifa_netmask)));
  }
  freeifaddrs(list);
  return out;
}

// PCI address of the interface's device: the link target's last PCI-shaped
// component (real sysfs), or PCI_SLOT_NAME in device/uevent (fixtures).
json PciAddress(const Sysroot& root, const std::string& dev) {
  if (auto link = root.ReadLink(dev)) {
    // A link that does not resolve (a fixture pointing into a /sys/devices it
    // lacks) still names the device in its text.
    char resolved[PATH_MAX];
    std::string path = realpath(root.Path(dev).c_str(), resolved) != nullptr ? resolved : *link;
    while (!path.empty()) {
      size_t slash = path.find_last_of('/');
      std::string comp = slash == std::string::npos ? path : path.substr(slash + 1);
      if (LooksLikePciAddress(comp)) return comp;
      if (slash == std::string::npos) break;
      path.resize(slash);
    }
  }
  if (auto ue = root.Read(dev + "/uevent"); ue.ok()) {
    std::string slot = UeventValue(*ue, "PCI_SLOT_NAME");
    if (!slot.empty()) return slot;
  }
  return nullptr;
}

json OneInterface(const Sysroot& root, const std::string& name,
                  const std::vector<std::string>& addrs) {
  const std::string base = "/sys/class/net/" + name;
  InterfaceSysfs s;
  s.name = name;
  s.has_device = root.Exists(base + "/device");
  s.has_bridge = root.IsDir(base + "/bridge");
  s.has_bonding = root.IsDir(base + "/bonding");
  s.has_tun_flags = root.Exists(base + "/tun_flags");
  if (auto ue = root.Read(base + "/uevent"); ue.ok()) s.devtype = UeventValue(*ue, "DEVTYPE");
  s.type = root.ReadInt(base + "/type");
  s.ifindex = root.ReadInt(base + "/ifindex");
  s.iflink = root.ReadInt(base + "/iflink");

  json j;
  j["name"] = name;
  j["kind"] = ClassifyInterface(s);
  auto oper = root.ReadLine(base + "/operstate");
  j["operstate"] = oper ? json(*oper) : json(nullptr);
  auto mtu = root.ReadInt(base + "/mtu");
  j["mtu"] = mtu ? json(*mtu) : json(nullptr);
  // Reading speed of a down link fails (EINVAL) or gives -1: unknown.
  auto speed = root.ReadInt(base + "/speed");
  j["speed_mbps"] = speed && *speed > 0 ? json(*speed) : json(nullptr);
  auto mac = root.ReadLine(base + "/address");
  j["mac"] = mac ? json(*mac) : json(nullptr);
  j["addresses"] = addrs;
  json numa = nullptr, pci = nullptr;
  if (s.has_device) {
    auto n = root.ReadInt(base + "/device/numa_node");
    if (n && *n >= 0) numa = *n;
    pci = PciAddress(root, base + "/device");
  }
  j["numa_node"] = numa;
  j["pci"] = pci;
  return j;
}

}  // namespace

std::string ClassifyInterface(const InterfaceSysfs& s) {
  if (s.name == "lo" || (s.type && *s.type == kArphrdLoopback)) return "loopback";
  if (s.devtype == "bridge" || s.has_bridge) return "bridge";
  if (s.devtype == "bond" || s.has_bonding) return "bond";
  if (s.devtype == "vlan") return "vlan";
  if (s.has_tun_flags) return "tun";
  if (s.has_device) return "physical";
  if (s.name.rfind("veth", 0) == 0) return "veth";
  // Bridges by their well-known names even when sysfs lacks bridge/.
  if (s.name == "docker0" || s.name.rfind("virbr", 0) == 0 || s.name.rfind("br-", 0) == 0 ||
      s.name.rfind("cni", 0) == 0) {
    return "bridge";
  }
  // A device-less interface paired with another ifindex is the inside end of
  // a veth pair (a container's eth0).
  if (s.ifindex && s.iflink && *s.ifindex != *s.iflink && s.devtype.empty()) return "veth";
  return "virtual";
}

bool LooksLikePciAddress(const std::string& s) {
  // dddd:bb:dd.f in hex
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 4 || i == 7 || i == 10) continue;
    if (!isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

std::map<std::string, std::vector<std::string>> ParseAddressFile(const std::string& text) {
  std::map<std::string, std::vector<std::string>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    line = Trim(line.substr(0, line.find('#')));
    std::istringstream f(line);
    std::string name, addr;
    if (f >> name >> addr) out[name].push_back(addr);
  }
  return out;
}

json CollectNetworkFacts(const Sysroot& root) {
  std::map<std::string, std::vector<std::string>> addrs;
  if (root.IsReal()) {
    addrs = SystemAddresses();
  } else if (auto f = root.Read("/proc/net/clustercheck-addrs"); f.ok()) {
    addrs = ParseAddressFile(*f);
  }
  json list = json::array();
  for (const auto& name : root.List("/sys/class/net")) {
    // bonding_masters is a file beside the interfaces.
    if (!root.IsDir("/sys/class/net/" + name)) continue;
    list.push_back(OneInterface(root, name, addrs[name]));
  }
  json net = {{"interfaces", list}};
  if (list.empty()) net["reason"] = "no interfaces under " + root.Path("/sys/class/net");
  return net;
}

std::vector<std::string> InterfaceNames(const json& network) {
  std::vector<std::string> names;
  if (!network.is_object() || !network.contains("interfaces")) return names;
  for (const auto& i : network["interfaces"]) {
    if (i.contains("name") && i["name"].is_string()) names.push_back(i["name"]);
  }
  return names;
}

}  // namespace cc::agent
