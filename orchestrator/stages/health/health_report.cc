#include "orchestrator/stages/health/health_report.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "common/hostlist.h"
#include "orchestrator/stages/health/health_action.h"

namespace cc {
namespace {

using nlohmann::json;

int ActionRank(const std::string& name) {
  auto a = HealthActionFromName(name);
  return a ? static_cast<int>(*a) : 0;
}

std::string Num(const json& v, const char* fmt = "%g") {
  if (!v.is_number()) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v.get<double>());
  return buf;
}

struct GpuSummary {
  std::string pcie, temp, power, ecc, remap;
};

GpuSummary SummarizeGpus(const json& gpus) {
  GpuSummary s;
  int below = 0, pending = 0, failed = 0;
  double hottest = -1, power = 0, ecc = 0;
  std::string lowest;
  for (const auto& g : gpus) {
    const json& p = g.value("pcie", json::array());
    if (p.is_array() && p.size() == 4 && p[1].is_number() && p[3].is_number()) {
      std::string link = "gen" + Num(p[0]) + " x" + Num(p[1]);
      if (p[1].get<int>() < p[3].get<int>() ||
          (p[0].is_number() && p[2].is_number() && p[0].get<int>() < p[2].get<int>())) {
        ++below;
        lowest = link;
      } else if (lowest.empty()) {
        lowest = link;
      }
    }
    if (g.value("temperature_c", json()).is_number()) {
      hottest = std::max(hottest, g["temperature_c"].get<double>());
    }
    if (g.value("power_w", json()).is_number()) power += g["power_w"].get<double>();
    if (g.value("ecc_volatile_uncorrected", json()).is_number()) {
      ecc += g["ecc_volatile_uncorrected"].get<double>();
    }
    const json& rows = g.value("remapped_rows", json());
    if (rows.is_object() && rows.value("pending", false)) ++pending;
    if (rows.is_object() && rows.value("failure", false)) ++failed;
  }
  s.pcie = lowest + (below ? " (" + std::to_string(below) + " below max)" : "");
  s.temp = hottest >= 0 ? Num(json(hottest)) + " C" : "";
  s.power = power > 0 ? Num(json(power), "%.0f") + " W" : "";
  s.ecc = Num(json(ecc));
  s.remap = std::to_string(pending) + " pending, " + std::to_string(failed) + " failed";
  return s;
}

std::string IbPorts(const json& ports) {
  if (!ports.is_array() || ports.empty()) return "";
  int up = 0;
  for (const auto& p : ports) up += p.value("state", json()) == "ACTIVE";
  return std::to_string(up) + "/" + std::to_string(ports.size()) + " active";
}

// Counters that moved between the two snapshots, from the stage's
// counter results of that node.
std::string CounterMoves(const RunData& run, const std::string& node) {
  std::string out;
  for (const auto& r : run.node_results) {
    if (r.stage != "health" || r.node != node) continue;
    const json& e = r.evidence;
    if (e.contains("counter") && e.contains("delta")) {
      out += (out.empty() ? "" : ", ") + e.value("port", std::string()) + " " +
             e.value("counter", std::string()) + " +" + std::to_string(e.value("delta", 0LL));
    }
  }
  return out;
}

}  // namespace

std::string TopologyText(const json& matrix) {
  if (!matrix.is_array() || matrix.empty()) return "";
  std::string out = "      ";
  char cell[16];
  for (size_t j = 0; j < matrix.size(); ++j) {
    std::snprintf(cell, sizeof cell, "%-7s", ("GPU" + std::to_string(j)).c_str());
    out += cell;
  }
  out += "\n";
  for (size_t i = 0; i < matrix.size(); ++i) {
    std::snprintf(cell, sizeof cell, "%-6s", ("GPU" + std::to_string(i)).c_str());
    out += cell;
    for (const auto& c : matrix[i]) {
      std::snprintf(cell, sizeof cell, "%-7s", c.is_string() ? c.get<std::string>().c_str() : "?");
      out += cell;
    }
    out += "\n";
  }
  return out;
}

std::optional<StageReportTable> HealthReportTable(const RunData& run) {
  std::vector<const NodeResult*> readings;
  for (const auto& r : run.node_results) {
    if (r.stage == "health" && r.check == "readings" && r.evidence.is_object()) {
      readings.push_back(&r);
    }
  }
  if (readings.empty()) return std::nullopt;
  std::stable_sort(readings.begin(), readings.end(), [](const NodeResult* a, const NodeResult* b) {
    return ActionRank(a->value) > ActionRank(b->value);
  });
  StageReportTable t;
  t.id = "health";
  t.title = "Health";
  t.note = "one row per node, the worst action first; PCIe is the lowest link";
  t.columns = {"node",          "action",          "GPUs",       "PCIe",       "hottest",
               "power",         "uncorrected ECC", "row remaps", "Xid events", "IB ports",
               "counters moved"};
  std::map<std::string, std::vector<std::string>> by_matrix;
  for (const NodeResult* r : readings) {
    const json& e = r->evidence;
    GpuSummary g = SummarizeGpus(e.value("gpus", json::array()));
    auto action = HealthActionFromName(r->value);
    StageReportTable::Row row;
    row.outcome = action ? OutcomeOfAction(*action) : Outcome::kPass;
    const json& log = e.value("kernel_log", json::object());
    std::string xids =
        log.value("status", json()) == "ok" ? Num(log.value("events", json())) : "not read";
    std::string gpus = e.value("gpu_status", json()) == "ok"
                           ? std::to_string(e.value("gpus", json::array()).size())
                           : "none";
    row.cells = {r->node,
                 r->value,
                 gpus,
                 g.pcie,
                 g.temp,
                 g.power,
                 g.ecc,
                 g.remap,
                 xids,
                 IbPorts(e.value("ib_ports", json())),
                 CounterMoves(run, r->node)};
    t.rows.push_back(std::move(row));
    std::string text = TopologyText(e.value("topology", json()));
    if (!text.empty()) by_matrix[text].push_back(r->node);
  }
  for (const auto& [text, nodes] : by_matrix) {
    t.blocks.push_back({"GPU topology of " + FoldHostlist(nodes), text});
  }
  return t;
}

}  // namespace cc
