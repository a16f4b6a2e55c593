#include "orchestrator/stages/nics/nic_inputs.h"

#include <arpa/inet.h>

#include <cstring>

namespace cc {

using Json = nlohmann::json;

namespace {

std::optional<long long> IntField(const Json& j, const char* key) {
  if (j.contains(key) && j[key].is_number_integer()) return j[key].get<long long>();
  return std::nullopt;
}

std::string StrField(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

}  // namespace

NodeNics NodeNicsFromFacts(const std::string& node, const Json& facts) {
  NodeNics out;
  out.node = node;
  if (!facts.is_object()) return out;
  const Json net = facts.value("network", Json::object());
  if (net.is_object() && net.contains("interfaces") && net["interfaces"].is_array()) {
    for (const Json& i : net["interfaces"]) {
      if (!i.is_object() || StrField(i, "name").empty()) continue;
      NicInfo n;
      n.name = StrField(i, "name");
      n.kind = StrField(i, "kind");
      n.operstate = StrField(i, "operstate");
      n.mtu = IntField(i, "mtu");
      n.speed_mbps = IntField(i, "speed_mbps");
      if (i.contains("addresses") && i["addresses"].is_array()) {
        for (const Json& a : i["addresses"]) {
          if (a.is_string()) n.addresses.push_back(a);
        }
      }
      out.nics.push_back(std::move(n));
    }
  }
  const Json rdma = facts.value("rdma", Json::object());
  if (rdma.is_object() && rdma.contains("ib_devices") && rdma["ib_devices"].is_array()) {
    for (const Json& d : rdma["ib_devices"]) {
      if (!d.is_object() || !d.contains("ports") || !d["ports"].is_array()) continue;
      for (const Json& p : d["ports"]) {
        if (!p.is_object()) continue;
        IbPortInfo ib;
        ib.device = StrField(d, "name");
        ib.port = static_cast<int>(IntField(p, "port").value_or(1));
        ib.state = StrField(p, "state");
        ib.link_layer = StrField(p, "link_layer");
        if (p.contains("rate_gbps") && p["rate_gbps"].is_number()) ib.rate_gbps = p["rate_gbps"];
        if (auto g = IntField(p, "roce_v2_gid_index")) ib.roce_v2_gid_index = static_cast<int>(*g);
        out.ib_ports.push_back(std::move(ib));
      }
    }
  }
  return out;
}

bool NicIsUp(const NicInfo& n) {
  return n.operstate == "up" || (n.operstate == "unknown" && !n.addresses.empty());
}

std::string AddressPart(const std::string& cidr) { return cidr.substr(0, cidr.find('/')); }

std::optional<std::string> SubnetOf(const std::string& cidr) {
  size_t slash = cidr.find('/');
  if (slash == std::string::npos) return std::nullopt;
  std::string addr = cidr.substr(0, slash);
  int prefix = 0;
  try {
    size_t used = 0;
    prefix = std::stoi(cidr.substr(slash + 1), &used);
    if (used != cidr.size() - slash - 1) return std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
  unsigned char b[16] = {0};
  int bytes = 0;
  int family = AF_INET;
  if (inet_pton(AF_INET, addr.c_str(), b) == 1) {
    bytes = 4;
    if (b[0] == 127) return std::nullopt;
  } else if (inet_pton(AF_INET6, addr.c_str(), b) == 1) {
    bytes = 16;
    family = AF_INET6;
    static const unsigned char kLoop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    if (std::memcmp(b, kLoop6, 16) == 0) return std::nullopt;
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (prefix < 0 || prefix > bytes * 8) return std::nullopt;
  for (int bit = prefix; bit < bytes * 8; ++bit)
    b[bit / 8] &= static_cast<unsigned char>(~(0x80 >> (bit % 8)));
  char text[INET6_ADDRSTRLEN] = {0};
  inet_ntop(family, b, text, sizeof text);
  return std::string(text) + "/" + std::to_string(prefix);
}

std::optional<long long> MostCommonValue(const std::vector<long long>& values) {
  std::map<long long, int> count;
  for (long long x : values) ++count[x];
  std::optional<long long> best;
  int best_n = 0;
  for (const auto& [x, n] : count) {
    if (n >= best_n) {
      best = x;
      best_n = n;
    }
  }
  return best;
}

std::vector<Subnet> GroupBySubnet(const std::vector<NodeNics>& nodes) {
  std::vector<Subnet> out;
  std::map<std::string, size_t> index;
  for (const NodeNics& n : nodes) {
    for (const NicInfo& nic : n.nics) {
      for (const std::string& a : nic.addresses) {
        auto s = SubnetOf(a);
        if (!s) continue;
        auto [it, fresh] = index.emplace(*s, out.size());
        if (fresh) out.push_back(Subnet{*s, {}});
        out[it->second].members.push_back({n.node, &nic, AddressPart(a)});
      }
    }
  }
  return out;
}

}  // namespace cc
