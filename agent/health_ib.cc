#include "agent/health_ib.h"

#include "agent/facts_rdma.h"

namespace cc::agent {

using nlohmann::json;

namespace {

json Counters(const Sysroot& root, const std::string& port_dir) {
  json out = json::object();
  for (const char* name : kIbHealthCounters) {
    // Counters are unsigned 64-bit in sysfs; ReadInt's long long holds any
    // value an error counter reaches.
    if (auto v = root.ReadInt(port_dir + "/counters/" + name)) out[name] = *v;
  }
  return out;
}

// The uverbs device of an IB device (e.g. "uverbs0") as sysfs names it, and
// whether /dev/infiniband/<it> exists: without it user-space verbs fail
// although the port is up (a container without the device, a missing udev
// rule).
void Uverbs(const Sysroot& root, const std::string& device_dir, json* port) {
  std::vector<std::string> names = root.List(device_dir + "/device/infiniband_verbs");
  if (names.empty()) {
    (*port)["uverbs"] = nullptr;
    (*port)["uverbs_present"] = nullptr;
    return;
  }
  (*port)["uverbs"] = names[0];
  (*port)["uverbs_present"] = root.Exists("/dev/infiniband/" + names[0]);
}

}  // namespace

json CollectIbHealth(const Sysroot& root) {
  const std::string kClass = "/sys/class/infiniband";
  if (!root.IsDir(kClass)) {
    // "ports" is there in every case, so that a reader can walk it blindly.
    return {{"status", "absent"},
            {"reason", "no " + kClass + " (no RDMA devices or driver)"},
            {"ports", json::array()}};
  }
  json ports = json::array();
  for (const std::string& dev : root.List(kClass)) {
    const std::string dir = kClass + "/" + dev;
    for (const std::string& port : root.List(dir + "/ports")) {
      json p = IbPortLink(root, dir, port);
      p["device"] = dev;
      p["counters"] = Counters(root, dir + "/ports/" + port);
      Uverbs(root, dir, &p);
      ports.push_back(std::move(p));
    }
  }
  return {{"status", "ok"}, {"ports", ports}};
}

}  // namespace cc::agent
