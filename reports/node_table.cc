#include "reports/node_table.h"

#include <map>

#include "orchestrator/stages/facts/facts_fields.h"

namespace cc {

std::vector<NodeRow> BuildNodeTable(const RunData& d) {
  std::map<std::string, const NodeRecord*> records;
  for (const auto& n : d.nodes) records[n.node] = &n;
  std::vector<NodeRow> rows;
  std::map<std::string, size_t> at;
  for (const auto& name : d.NodeNames()) {
    at.emplace(name, rows.size());
    NodeRow row;
    row.node = name;
    auto it = records.find(name);
    if (it != records.end()) {
      const NodeRecord& rec = *it->second;
      row.address = rec.address;
      row.reachable = rec.reachable;
      row.error = rec.error;
      auto f = FlattenFacts(rec.facts);
      row.driver = f["driver"];
      row.cuda = f["cuda_driver"];
      row.nccl = f["nccl"];
      row.gpus = f["gpu_count"];
      if (!f["gpu_model"].empty()) {
        row.gpus = (row.gpus.empty() ? "" : row.gpus + " x ") + f["gpu_model"];
      }
    }
    rows.push_back(row);
  }
  auto worsen = [&](const std::string& node, Outcome o) {
    auto it = at.find(node);
    if (it != at.end()) rows[it->second].worst = Worse(rows[it->second].worst, o);
  };
  for (const auto& r : d.node_results) {
    auto it = at.find(r.node);
    if (it == at.end()) continue;
    rows[it->second].counts.Add(r.outcome);
    worsen(r.node, r.outcome);
  }
  for (const auto& r : d.pair_results) {
    worsen(r.src, r.outcome);
    worsen(r.dst, r.outcome);
  }
  const RoutinePairs& routine = d.routine_pairs;
  for (const auto& e : routine.entries()) {
    worsen(routine.node(e.src), routine.group(e).outcome);
    worsen(routine.node(e.dst), routine.group(e).outcome);
  }
  return rows;
}

nlohmann::json NodeTableToJson(const std::vector<NodeRow>& rows) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& r : rows) {
    a.push_back({{"node", r.node},
                 {"address", r.address},
                 {"reachable", r.reachable},
                 {"error", r.error},
                 {"driver", r.driver},
                 {"cuda", r.cuda},
                 {"nccl", r.nccl},
                 {"gpus", r.gpus},
                 {"worst", OutcomeName(r.worst)},
                 {"checks", r.counts.ToString()}});
  }
  return a;
}

}  // namespace cc
