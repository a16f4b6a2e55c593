#include "orchestrator/analysis/verdict_next_step.h"

#include <algorithm>

namespace cc {
namespace {

using nlohmann::json;

std::string Str(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  if (it == j.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number()) return it->dump();
  return "";
}

// The first of `keys` that the object has as a string or number.
std::string First(const json& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    std::string v = Str(j, k);
    if (!v.empty()) return v;
  }
  return "";
}

std::string SetMtu(const std::string& mtu, const std::string& nic, const std::string& node) {
  return "set MTU " + mtu + " on " + nic + " of " + node + " (ip link set dev " + nic + " mtu " +
         mtu + ", and in its network configuration so that it survives a reboot)";
}

// One nics problem ({"kind", "nic", "message", ...}) of `node` on `subnet`.
std::string ProblemStep(const json& p, const std::string& node, const std::string& subnet,
                        const json& subnet_mtu) {
  if (p.contains("next_step") && p["next_step"].is_string()) return p["next_step"];
  std::string kind = Str(p, "kind"), nic = First(p, {"nic", "interface"});
  std::string where = nic.empty() ? node : nic + " of " + node;
  if (kind == "mtu") {
    std::string mtu = First(p, {"expected_mtu", "mtu_expected"});
    if (mtu.empty()) mtu = Str(subnet_mtu, subnet.c_str());
    if (mtu.empty() || nic.empty())
      return "give " + where + " the MTU the rest of " + subnet + " has";
    return SetMtu(mtu, nic, node);
  }
  if (kind == "down") {
    return "bring " + where + " up (ip link set dev " + nic +
           " up); if it stays down, check its "
           "cable and switch port";
  }
  if (kind == "missing")
    return "give " + node + " an address on " + subnet + ", the cluster's network";
  if (kind == "speed") {
    return "check why " + where + " links slower than the rest of " + subnet + " (ethtool " + nic +
           "; the cable and the switch port's speed)";
  }
  if (kind == "unreachable") {
    return "check " + where + ": its address, routes and firewall toward the rest of " + subnet;
  }
  return "";
}

}  // namespace

std::string JoinSteps(const std::vector<std::string>& steps, size_t max_steps) {
  std::vector<std::string> distinct;
  for (const auto& s : steps) {
    if (!s.empty() && std::find(distinct.begin(), distinct.end(), s) == distinct.end()) {
      distinct.push_back(s);
    }
  }
  std::string out;
  for (size_t i = 0; i < distinct.size() && i < max_steps; ++i) {
    out += (i ? "; " : "") + distinct[i];
  }
  if (distinct.size() > max_steps) {
    out += " (and " + std::to_string(distinct.size() - max_steps) + " more in the evidence)";
  }
  return out;
}

json SubnetMtus(const json& selection) {
  json out = json::object();
  if (!selection.is_object() || !selection.contains("subnets") ||
      !selection["subnets"].is_array()) {
    return out;
  }
  for (const auto& s : selection["subnets"]) {
    std::string cidr = Str(s, "subnet");
    if (!cidr.empty() && s.contains("mtu") && s["mtu"].is_number_integer()) out[cidr] = s["mtu"];
  }
  return out;
}

std::string NextStepFromEvidence(const json& e, const std::string& node, const json& subnet_mtu) {
  if (!e.is_object()) return "";
  if (e.contains("next_step") && e["next_step"].is_string() &&
      !e["next_step"].get<std::string>().empty()) {
    return e["next_step"].get<std::string>();
  }
  if (e.contains("problems") && e["problems"].is_array()) {
    std::vector<std::string> steps;
    std::string subnet = Str(e, "subnet");
    for (const auto& p : e["problems"]) steps.push_back(ProblemStep(p, node, subnet, subnet_mtu));
    std::string joined = JoinSteps(steps);
    if (!joined.empty()) return joined;
  }
  std::string nic = First(e, {"interface", "nic"});
  std::string mtu = First(e, {"expected_mtu", "mtu_expected"});
  if (!nic.empty() && !mtu.empty()) return SetMtu(mtu, nic, node);
  std::string port = First(e, {"port_range", "ports", "port"});
  std::string chain = Str(e, "chain");
  if (!port.empty() && !chain.empty()) {
    std::string proto = First(e, {"protocol", "proto"});
    return "open " + (proto.empty() ? "tcp" : proto) + " " + port + " in the " + chain +
           " chain of " + node + "'s firewall (iptables -S " + chain + "; nft list ruleset)";
  }
  std::string field = First(e, {"component", "field"});
  std::string want = First(e, {"majority", "expected"});
  if (!field.empty() && !want.empty()) {
    return "install " + field + " " + want + " on " + node +
           " (the version the rest of the cluster has), or drain " + node;
  }
  return "";
}

}  // namespace cc
