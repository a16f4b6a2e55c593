#include "reports/stage_lines.h"

#include <algorithm>
#include <map>
#include <vector>

#include "common/hostlist.h"
#include "orchestrator/stages/stages.h"

namespace cc {
namespace {

constexpr size_t kMessagesPerStage = 3;

struct StageSummary {
  OutcomeCounts counts;
  // Pair checks ("tcp/29500") with their result counts, in first-seen order.
  std::vector<std::pair<std::string, OutcomeCounts>> pair_checks;
  // Distinct messages in order of first appearance, with their nodes.
  std::vector<std::pair<std::string, std::vector<std::string>>> messages;

  void AddMessage(const std::string& node, const std::string& message) {
    for (auto& [m, nodes] : messages) {
      if (m == message) {
        nodes.push_back(node);
        return;
      }
    }
    messages.push_back({message, {node}});
  }
};

std::vector<std::string> StageOrder(const RunData& d) {
  std::vector<std::string> order;
  auto it = d.run.meta.find("stages");
  if (it != d.run.meta.end() && it->is_array()) {
    for (const auto& s : *it)
      if (s.is_string()) order.push_back(s.get<std::string>());
  }
  return order;
}

}  // namespace

std::string RenderStageLines(const RunData& d) {
  std::map<std::string, StageSummary> per_stage;
  for (const auto& r : d.node_results) {
    StageSummary& s = per_stage[r.stage];
    s.counts.Add(r.outcome);
    // A pass with a message worth reading is one that describes (e.g. the
    // interfaces found); plain passes are the counts.
    if (r.outcome != Outcome::kPass && !r.message.empty()) s.AddMessage(r.node, r.message);
  }
  const PairsByCheck by_check(d);
  for (size_t i = 0; i < by_check.checks.size(); ++i) {
    const auto& [stage, check] = by_check.checks[i];
    StageSummary& s = per_stage[stage];
    OutcomeCounts counts;
    by_check.ForEachResult(i, d.routine_pairs,
                           [&](const std::string&, const std::string&, Outcome o,
                               const std::string&, std::optional<double>, const std::string&) {
                             s.counts.Add(o);
                             counts.Add(o);
                           });
    s.pair_checks.push_back({check, counts});
  }
  std::string out = "on this machine, stage by stage\n";
  for (const auto& stage : StageOrder(d)) {
    auto it = per_stage.find(stage);
    std::string head = "  " + stage + std::string(stage.size() < 9 ? 9 - stage.size() : 1, ' ');
    if (it == per_stage.end()) {
      out += head + "stored nothing\n";
      continue;
    }
    out += head + it->second.counts.ToString() + "\n";
    if (!it->second.pair_checks.empty()) {
      std::string pairs;
      for (const auto& [check, counts] : it->second.pair_checks) {
        pairs += (pairs.empty() ? "" : "; ") + check + " " + counts.ToString();
      }
      out += "      between the nodes: " + pairs + "\n";
    }
    size_t shown = 0;
    for (const auto& [message, nodes] : it->second.messages) {
      if (shown++ == kMessagesPerStage) break;
      std::string who = nodes.size() == 1 ? nodes[0] : FoldHostlist(nodes);
      out += "      " + who + ": " + message + "\n";
    }
  }
  return out;
}

}  // namespace cc
