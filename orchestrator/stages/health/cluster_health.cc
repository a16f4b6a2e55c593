#include "orchestrator/stages/health/cluster_health.h"

#include <algorithm>
#include <set>

namespace cc {
namespace {

using nlohmann::json;
using A = HealthAction;
using Findings = std::map<std::string, std::vector<HealthFinding>>;

std::string Str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// The value most nodes have, and how many have it; ties go to the
// smallest value (deterministic).
template <typename T>
std::pair<T, size_t> Majority(const std::vector<T>& values) {
  std::map<T, size_t> count;
  for (const auto& v : values) ++count[v];
  std::pair<T, size_t> best{};
  for (const auto& [v, n] : count) {
    if (n > best.second) best = {v, n};
  }
  return best;
}

HealthFinding With(HealthFinding f, json evidence) {
  evidence["action"] = HealthActionName(f.action);
  f.evidence = std::move(evidence);
  return f;
}

// --- IB ports -----------------------------------------------------------

struct PortReading {
  std::string node;
  json port;
};

void JudgeIbPorts(const ClusterHealthInput& in, Findings& out) {
  std::map<std::string, std::vector<PortReading>> by_port;  // "mlx5_0/1" -> readings
  for (const auto& [node, h] : in.health) {
    const json& ib = h.value("ib", json());
    if (Str(ib, "status") != "ok") continue;
    for (const auto& p : ib.value("ports", json::array())) {
      by_port[Str(p, "device") + "/" + std::to_string(p.value("port", 0))].push_back({node, p});
    }
  }
  for (const auto& [name, readings] : by_port) {
    std::vector<bool> up;
    std::vector<double> rates;
    for (const auto& r : readings) {
      bool active = Str(r.port, "state") == "ACTIVE" && Str(r.port, "phys_state") == "LinkUp";
      up.push_back(active);
      if (active && r.port.value("rate_gbps", json()).is_number()) {
        rates.push_back(r.port["rate_gbps"].get<double>());
      }
    }
    size_t n_up = static_cast<size_t>(std::count(up.begin(), up.end(), true));
    auto [rate, n_rate] = Majority(rates);
    for (size_t i = 0; i < readings.size(); ++i) {
      const auto& [node, p] = readings[i];
      std::string state = Str(p, "state") + "/" + Str(p, "phys_state");
      if (!up[i]) {
        // Down on most nodes: a port nobody cabled, not a fault.
        if (n_up * 2 <= readings.size()) continue;
        out[node].push_back(
            With(Finding("ib." + name + ".state", A::kDrain,
                         name + " is " + state + " where " + std::to_string(n_up) + " of " +
                             std::to_string(readings.size()) + " nodes have it ACTIVE/LinkUp",
                         state, "ACTIVE/LinkUp"),
                 {{"port", name}}));
        continue;
      }
      double mine = p.value("rate_gbps", json()).is_number() ? p["rate_gbps"].get<double>() : 0;
      double want = in.expected_ib_rate_gbps.value_or(n_rate * 2 > rates.size() ? rate : 0);
      if (mine > 0 && want > 0 && mine < want) {
        std::string whose = in.expected_ib_rate_gbps ? "the inventory's [expect] ib_rate"
                                                     : "the cluster's majority";
        out[node].push_back(
            With(Finding("ib." + name + ".rate", A::kInvestigate,
                         name + " trained at " + Str(p, "rate") + " below " + whose + " (" +
                             std::to_string(static_cast<long long>(want)) +
                             " Gb/s): a cable, "
                             "transceiver or switch port",
                         std::to_string(static_cast<long long>(mine)) + " Gb/s",
                         std::to_string(static_cast<long long>(want)) + " Gb/s"),
                 {{"port", name}}));
        out[node].back().outcome = Outcome::kFail;
      }
    }
  }
}

// --- GPU topology -------------------------------------------------------

bool IsNvLink(const std::string& label) { return label.rfind("NV", 0) == 0; }

// Nodes are compared with nodes of the same GPU model and count.
std::string GpuGroup(const json& gpu) {
  const json& gpus = gpu.value("gpus", json::array());
  std::string model = gpus.empty() ? "" : Str(gpus[0], "name");
  return model + " x" + std::to_string(gpus.size());
}

void JudgeTopology(const ClusterHealthInput& in, Findings& out) {
  std::map<std::string, std::vector<std::string>> groups;
  for (const auto& [node, h] : in.health) {
    const json& gpu = h.value("gpu", json());
    if (Str(gpu, "status") != "ok" || !gpu.value("topology", json()).is_array()) continue;
    groups[GpuGroup(gpu)].push_back(node);
  }
  for (const auto& [group, nodes] : groups) {
    if (nodes.size() < 2) continue;  // nothing to compare with
    const json& first = in.health.at(nodes[0])["gpu"]["topology"];
    size_t n = first.size();
    for (const auto& node : nodes) {
      const json& m = in.health.at(node)["gpu"]["topology"];
      std::vector<std::string> lost;
      for (size_t i = 0; i < n && i < m.size(); ++i) {
        for (size_t j = i + 1; j < n && j < m[i].size(); ++j) {
          std::vector<std::string> cells;
          for (const auto& other : nodes) {
            const json& om = in.health.at(other)["gpu"]["topology"];
            if (i < om.size() && j < om[i].size()) cells.push_back(om[i][j].get<std::string>());
          }
          auto [label, count] = Majority(cells);
          std::string mine = m[i][j].get<std::string>();
          if (count * 2 > cells.size() && IsNvLink(label) && !IsNvLink(mine)) {
            lost.push_back("GPU" + std::to_string(i) + "-GPU" + std::to_string(j) + " " + mine +
                           " (majority " + label + ")");
          }
        }
      }
      if (lost.empty()) continue;
      std::string list;
      for (size_t k = 0; k < lost.size() && k < 8; ++k) list += (k ? ", " : "") + lost[k];
      if (lost.size() > 8) list += ", ... (" + std::to_string(lost.size()) + " pairs)";
      out[node].push_back(
          With(Finding("topology", A::kReboot,
                       "GPU pairs fell from NVLink to a PCIe path: " + list +
                           "; if a reboot does not bring NVLink back, drain for repair",
                       std::to_string(lost.size()) + " pairs without NVLink", "NVLink"),
               {{"pairs", lost}, {"group", group}}));
    }
  }
}

// The nearest NIC of each GPU, as nvidia-smi ranks locality.
int LevelRank(const std::string& level) {
  static const char* kOrder[] = {"X", "PIX", "PXB", "PHB", "NODE", "SYS"};
  for (int i = 0; i < 6; ++i) {
    if (level == kOrder[i]) return i;
  }
  return 6;
}

void JudgeGpuNicLocality(const ClusterHealthInput& in, Findings& out) {
  // node -> per GPU index, its nearest NIC's level.
  std::map<std::string, std::map<long long, std::string>> nearest;
  for (const auto& [node, f] : in.facts) {
    const json& loc = f.value("network", json::object()).value("gpu_locality", json::array());
    for (const auto& g : loc) {
      std::string best;
      for (const auto& nic : g.value("nics", json::array())) {
        std::string l = Str(nic, "level");
        if (best.empty() || LevelRank(l) < LevelRank(best)) best = l;
      }
      if (!best.empty()) nearest[node][g.value("gpu", -1LL)] = best;
    }
  }
  std::map<long long, std::vector<std::string>> per_gpu;
  for (const auto& [node, m] : nearest) {
    for (const auto& [gpu, level] : m) per_gpu[gpu].push_back(level);
  }
  for (const auto& [node, m] : nearest) {
    for (const auto& [gpu, level] : m) {
      auto [usual, count] = Majority(per_gpu[gpu]);
      if (count * 2 <= per_gpu[gpu].size() || level != "SYS" || LevelRank(usual) > 2) continue;
      out[node].push_back(
          With(Finding("gpu" + std::to_string(gpu) + ".nic_locality", A::kInvestigate,
                       "GPU " + std::to_string(gpu) +
                           "'s nearest NIC is across the CPU interconnect "
                           "(SYS) where most nodes have one at " +
                           usual + ": GPUDirect RDMA will cost bandwidth (NIC in the wrong slot?)",
                       "SYS", usual),
               {{"gpu", gpu}}));
    }
  }
}

// --- GPU modes ----------------------------------------------------------

void JudgeModes(const ClusterHealthInput& in, Findings& out) {
  struct Mode {
    const char* field;  // in a GPU's readings ("ecc.mode" is nested)
    const char* name;
  };
  const Mode kModes[] = {
      {"persistence_mode", "persistence mode"}, {"mig_mode", "MIG mode"}, {"ecc", "ECC mode"}};
  for (const auto& mode : kModes) {
    auto value_of = [&](const json& g) {
      const json& v = g.value(mode.field, json());
      if (std::string(mode.field) == "ecc") return Str(v, "mode");
      return v.is_string() ? v.get<std::string>() : std::string();
    };
    std::vector<std::string> all;
    for (const auto& [node, h] : in.health) {
      for (const auto& g : h.value("gpu", json::object()).value("gpus", json::array())) {
        if (!value_of(g).empty()) all.push_back(value_of(g));
      }
    }
    auto [usual, count] = Majority(all);
    if (count * 2 <= all.size()) continue;
    for (const auto& [node, h] : in.health) {
      std::vector<std::string> odd;
      std::string now;  // what the odd GPUs have (the first one's value)
      for (const auto& g : h.value("gpu", json::object()).value("gpus", json::array())) {
        std::string v = value_of(g);
        if (v.empty() || v == usual) continue;
        if (now.empty()) now = v;
        odd.push_back(std::to_string(g.value("index", -1)));
      }
      if (odd.empty()) continue;
      std::string list;
      for (const auto& i : odd) list += (list.empty() ? "" : ", ") + i;
      out[node].push_back(With(Finding(std::string("gpu.") + mode.field, A::kInvestigate,
                                       std::string(mode.name) + " " + now + " on GPU " + list +
                                           " where the cluster has it " + usual,
                                       now, usual),
                               {{"gpus", odd}}));
    }
  }
}

}  // namespace

std::map<std::string, std::vector<HealthFinding>> JudgeCluster(const ClusterHealthInput& in) {
  Findings out;
  JudgeIbPorts(in, out);
  JudgeTopology(in, out);
  JudgeGpuNicLocality(in, out);
  JudgeModes(in, out);
  return out;
}

}  // namespace cc
