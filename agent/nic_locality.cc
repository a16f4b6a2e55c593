#include "agent/nic_locality.h"

#include <limits.h>
#include <stdlib.h>

#include <sstream>

namespace cc::agent {

using nlohmann::json;

namespace {

struct PciDevice {
  std::vector<std::string> path;
  std::optional<long long> numa;
};

PciDevice Lookup(const Sysroot& root, const std::string& bdf) {
  PciDevice d;
  const std::string link = "/sys/bus/pci/devices/" + bdf;
  char resolved[PATH_MAX];
  if (realpath(root.Path(link).c_str(), resolved) != nullptr) d.path = PciPath(resolved);
  // Fixture links point into a /sys/devices they lack: their text suffices.
  if (d.path.empty()) {
    if (auto text = root.ReadLink(link)) d.path = PciPath(*text);
  }
  auto n = root.ReadInt(link + "/numa_node");
  if (n && *n >= 0) d.numa = n;
  return d;
}

}  // namespace

std::vector<std::string> PciPath(const std::string& link_text) {
  std::vector<std::string> parts, out;
  std::stringstream in(link_text);
  std::string c;
  while (std::getline(in, c, '/')) parts.push_back(c);
  bool started = false;
  for (const auto& p : parts) {
    if (!started && p.rfind("pci", 0) == 0 && p.size() > 3) started = true;
    if (started && !p.empty()) out.push_back(p);
  }
  return out;
}

std::string PciLocality(const std::vector<std::string>& a, const std::vector<std::string>& b,
                        std::optional<long long> numa_a, std::optional<long long> numa_b) {
  if (a.empty() || b.empty()) return "?";
  if (a == b) return "X";
  if (a[0] != b[0]) return numa_a && numa_b && *numa_a == *numa_b ? "NODE" : "SYS";
  size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  // common == 1: only the root (host bridge) is shared.
  if (common <= 1) return "PHB";
  // Both directly below the deepest shared bridge: one bridge between them.
  if (a.size() == common + 1 && b.size() == common + 1) return "PIX";
  return "PXB";
}

json GpuNicLocality(const Sysroot& root, const json& gpu, const json& network,
                    const json& ib_devices) {
  json out = json::array();
  if (!gpu.is_object() || !gpu.contains("gpus") || !gpu["gpus"].is_array()) return out;
  std::vector<std::pair<std::string, std::string>> nics;  // name, pci
  if (network.is_object() && network.contains("interfaces")) {
    for (const auto& i : network["interfaces"]) {
      if (i.value("kind", "") == "physical" && i.contains("pci") && i["pci"].is_string()) {
        nics.emplace_back(i["name"].get<std::string>(), i["pci"].get<std::string>());
      }
    }
  }
  if (ib_devices.is_array()) {
    for (const auto& d : ib_devices) {
      if (d.contains("pci") && d["pci"].is_string()) {
        nics.emplace_back(d["name"].get<std::string>(), d["pci"].get<std::string>());
      }
    }
  }
  for (const auto& g : gpu["gpus"]) {
    if (!g.contains("pci_bus_id") || !g["pci_bus_id"].is_string()) continue;
    std::string bus = g["pci_bus_id"];
    PciDevice gd = Lookup(root, bus);
    json list = json::array();
    for (const auto& [name, pci] : nics) {
      PciDevice nd = Lookup(root, pci);
      list.push_back({{"name", name},
                      {"pci", pci},
                      {"level", PciLocality(gd.path, nd.path, gd.numa, nd.numa)}});
    }
    out.push_back({{"gpu", g.value("index", json(nullptr))}, {"bus_id", bus}, {"nics", list}});
  }
  return out;
}

}  // namespace cc::agent
