#include "agent/facts_rdma.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "agent/facts_software.h"

namespace cc::agent {

using nlohmann::json;

namespace {

// GID tables hold up to 256 entries on mlx5, 128 on most; unused slots are
// all zeros and their type file fails to read.
constexpr int kMaxGids = 1024;

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::vector<GidEntry> ReadGids(const Sysroot& root, const std::string& port) {
  std::vector<GidEntry> out;
  std::vector<int> indexes;
  for (const auto& n : root.List(port + "/gids")) {
    if (AllDigits(n) && n.size() < 6) indexes.push_back(std::stoi(n));
  }
  std::sort(indexes.begin(), indexes.end());
  for (int i : indexes) {
    if (out.size() >= static_cast<size_t>(kMaxGids)) break;
    std::string idx = std::to_string(i);
    auto gid = root.ReadLine(port + "/gids/" + idx);
    if (!gid || IsEmptyGid(*gid)) continue;
    GidEntry e;
    e.index = i;
    e.gid = *gid;
    e.type = root.ReadLine(port + "/gid_attrs/types/" + idx).value_or("");
    e.ndev = root.ReadLine(port + "/gid_attrs/ndevs/" + idx).value_or("");
    out.push_back(std::move(e));
  }
  return out;
}

json OnePort(const Sysroot& root, const std::string& base, const std::string& port) {
  const std::string p = base + "/ports/" + port;
  json entry = IbPortLink(root, base, port);
  std::vector<GidEntry> gids = ReadGids(root, p);
  json table = json::array();
  std::set<std::string> ndevs;
  for (const GidEntry& g : gids) {
    table.push_back({{"index", g.index}, {"gid", g.gid}, {"type", g.type}, {"ndev", g.ndev}});
    if (!g.ndev.empty()) ndevs.insert(g.ndev);
  }
  entry["gids"] = table;
  auto v2 = PickRoceV2GidIndex(gids);
  entry["roce_v2_gid_index"] = v2 ? json(*v2) : json(nullptr);
  entry["netdevs"] = json(std::vector<std::string>(ndevs.begin(), ndevs.end()));
  return entry;
}

}  // namespace

json IbPortLink(const Sysroot& root, const std::string& device_dir, const std::string& port) {
  const std::string p = device_dir + "/ports/" + port;
  auto read = [&root, &p](const char* f) -> json {
    auto v = root.ReadLine(p + "/" + f);
    return v ? json(StripSysfsEnumPrefix(*v)) : json(nullptr);
  };
  auto rate = root.ReadLine(p + "/rate");
  auto gbps = rate ? ParseIbRateGbps(*rate) : std::nullopt;
  // Port folders are numbers; anything else is kept as its name.
  return {{"port", AllDigits(port) && port.size() < 6 ? json(std::stoi(port)) : json(port)},
          {"state", read("state")},
          {"phys_state", read("phys_state")},
          {"rate", rate ? json(*rate) : json(nullptr)},
          {"rate_gbps", gbps ? json(*gbps) : json(nullptr)},
          {"link_layer", read("link_layer")}};
}

std::optional<double> ParseIbRateGbps(const std::string& rate) {
  const char* s = rate.c_str();
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end == s || v < 0) return std::nullopt;
  std::string rest = Trim(end);
  if (rest.rfind("Gb/sec", 0) != 0 && rest.rfind("Gb/s", 0) != 0) return std::nullopt;
  return v;
}

bool IsEmptyGid(const std::string& gid) {
  for (char c : gid) {
    if (c != '0' && c != ':') return false;
  }
  return true;
}

bool IsIpv4MappedGid(const std::string& gid) {
  // 0000:0000:0000:0000:0000:ffff:xxxx:xxxx
  static const std::string kPrefix = "0000:0000:0000:0000:0000:ffff:";
  return gid.size() == 39 && gid.compare(0, kPrefix.size(), kPrefix) == 0;
}

std::optional<int> PickRoceV2GidIndex(const std::vector<GidEntry>& gids) {
  std::optional<int> first_v2, routable_v2;
  for (const GidEntry& g : gids) {
    if (g.type != "RoCE v2" || IsEmptyGid(g.gid)) continue;
    if (IsIpv4MappedGid(g.gid)) return g.index;
    if (!first_v2) first_v2 = g.index;
    if (!routable_v2 && g.gid.rfind("fe80:", 0) != 0) routable_v2 = g.index;
  }
  return routable_v2 ? routable_v2 : first_v2;
}

json CollectIbDevices(const Sysroot& root) {
  json devs = json::array();
  for (const auto& dev : root.List("/sys/class/infiniband")) {
    const std::string base = "/sys/class/infiniband/" + dev;
    json ports = json::array();
    std::set<std::string> netdevs;
    for (const auto& port : root.List(base + "/ports")) {
      json p = OnePort(root, base, port);
      for (const auto& n : p["netdevs"]) netdevs.insert(n.get<std::string>());
      ports.push_back(std::move(p));
    }
    // IPoIB and RoCE netdevs sit under the PCI function's net/; RoCE ones
    // also name themselves in the GID table (a bond's GIDs name the bond).
    for (const auto& n : root.List(base + "/device/net")) netdevs.insert(n);
    json d = {{"name", dev}, {"ports", ports}};
    if (!netdevs.empty()) d["netdevs"] = std::vector<std::string>(netdevs.begin(), netdevs.end());
    auto numa = root.ReadInt(base + "/device/numa_node");
    d["numa_node"] = numa && *numa >= 0 ? json(*numa) : json(nullptr);
    json pci = nullptr;
    if (auto link = root.ReadLink(base + "/device")) {
      std::string s = *link;
      std::string last = s.substr(s.find_last_of('/') + 1);
      if (last.size() == 12 && last[4] == ':' && last[7] == ':' && last[10] == '.') pci = last;
    }
    if (pci.is_null()) {
      if (auto ue = root.Read(base + "/device/uevent"); ue.ok()) {
        for (const auto& [k, v] : KeyValueLines(*ue)) {
          if (k == "PCI_SLOT_NAME") pci = v;
        }
      }
    }
    d["pci"] = pci;
    devs.push_back(std::move(d));
  }
  return devs;
}

}  // namespace cc::agent
