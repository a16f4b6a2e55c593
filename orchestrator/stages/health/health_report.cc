#include "orchestrator/stages/health/health_report.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "common/hostlist.h"
#include "common/json_read.h"
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

// A row's GPU cells from a node's readings: its "gpus", each {"index",
// "pcie": [gen, width, max gen, max width], "temperature_c", ...}; what is
// not a number counts as not read.
GpuSummary SummarizeGpus(const json& readings, JsonProblems* problems) {
  GpuSummary s;
  int below = 0, pending = 0, failed = 0;
  double hottest = -1, power = 0, ecc = 0;
  std::string lowest;
  JsonForEachObject(readings, "gpus", problems, [&](const json& g) {
    const json& p = JsonArray(g, "pcie", problems);
    if (p.size() == 4 && p[1].is_number() && p[3].is_number()) {
      std::string link = "gen" + Num(p[0]) + " x" + Num(p[1]);
      if (p[1].get<double>() < p[3].get<double>() ||
          (p[0].is_number() && p[2].is_number() && p[0].get<double>() < p[2].get<double>())) {
        ++below;
        lowest = link;
      } else if (lowest.empty()) {
        lowest = link;
      }
    }
    hottest = std::max(hottest, JsonNumber(g, "temperature_c", -1, problems));
    power += JsonNumber(g, "power_w", 0, problems);
    ecc += JsonNumber(g, "ecc_volatile_uncorrected", 0, problems);
    const json& rows = JsonObject(g, "remapped_rows", problems);
    JsonProblems::Within in_rows(problems, "remapped_rows");
    if (JsonBool(rows, "pending", false, problems)) ++pending;
    if (JsonBool(rows, "failure", false, problems)) ++failed;
  });
  s.pcie = lowest + (below ? " (" + std::to_string(below) + " below max)" : "");
  s.temp = hottest >= 0 ? Num(json(hottest)) + " C" : "";
  s.power = power > 0 ? Num(json(power), "%.0f") + " W" : "";
  s.ecc = Num(json(ecc));
  s.remap = std::to_string(pending) + " pending, " + std::to_string(failed) + " failed";
  return s;
}

std::string IbPorts(const json& ports, JsonProblems* problems) {
  if (ports.empty()) return "";
  int up = 0;
  JsonProblems::Within in_ports(problems, "ib_ports");
  for (const auto& p : ports) up += JsonString(p, "state", "", problems) == "ACTIVE";
  return std::to_string(up) + "/" + std::to_string(ports.size()) + " active";
}

// Counters that moved between the two snapshots, from the stage's
// counter results of that node.
std::string CounterMoves(const RunData& run, const std::string& node) {
  std::string out;
  for (const auto& r : run.node_results) {
    if (r.stage != "health" || r.node != node) continue;
    const json& e = r.evidence;
    if (e.is_object() && e.contains("counter") && e.contains("delta")) {
      out += (out.empty() ? "" : ", ") + JsonString(e, "port") + " " + JsonString(e, "counter") +
             " +" + std::to_string(JsonInt(e, "delta"));
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
    JsonProblems p;
    GpuSummary g = SummarizeGpus(e, &p);
    auto action = HealthActionFromName(r->value);
    StageReportTable::Row row;
    row.outcome = action ? OutcomeOfAction(*action) : Outcome::kPass;
    const json& log = JsonObject(e, "kernel_log", &p);
    std::string xids = "not read";
    {
      JsonProblems::Within in_log(&p, "kernel_log");
      if (JsonString(log, "status", "", &p) == "ok") xids = Num(JsonMember(log, "events"));
    }
    std::string gpus = JsonString(e, "gpu_status", "", &p) == "ok"
                           ? std::to_string(JsonArray(e, "gpus").size())
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
                 IbPorts(JsonArray(e, "ib_ports", &p), &p),
                 CounterMoves(run, r->node)};
    t.rows.push_back(std::move(row));
    std::string text = TopologyText(JsonMember(e, "topology"));
    if (!text.empty()) by_matrix[text].push_back(r->node);
    for (const auto& note : p.notes()) t.problems.Note(r->node + ": readings: " + note);
  }
  for (const auto& [text, nodes] : by_matrix) {
    t.blocks.push_back({"GPU topology of " + FoldHostlist(nodes), text});
  }
  return t;
}

}  // namespace cc
