#include "orchestrator/plan.h"

#include <algorithm>

#include "orchestrator/run/schedule.h"
#include "orchestrator/stages/stages.h"

namespace cc {
namespace {

// ssh + push + hello, one window of nodes: an order of magnitude, seen on
// small clusters, not a promise.
constexpr double kConnectWaveS = 3;

}  // namespace

PlanInput PlanInputOf(const Inventory& inv, const PlanOptions& o) {
  PlanInput in{inv};
  in.nodes = inv.nodes.size();
  in.fanout = static_cast<size_t>(std::max(1, o.fanout > 0 ? o.fanout : inv.ssh.fanout));
  in.waves = in.nodes == 0 ? 0 : (in.nodes + in.fanout - 1) / in.fanout;
  std::vector<std::string> names;
  for (const auto& node : inv.nodes) names.push_back(node.name);
  auto rounds = RoundRobinRounds(names);
  in.pairs = in.nodes * (in.nodes > 0 ? in.nodes - 1 : 0) / 2;
  in.rounds = rounds.size();
  in.per_round = rounds.empty() ? 0 : rounds.front().size();
  return in;
}

std::vector<StagePlan> PlanStages(const Inventory& inv, const std::vector<std::string>& stages,
                                  const PlanOptions& o) {
  const PlanInput in = PlanInputOf(inv, o);
  std::vector<StagePlan> out;
  out.push_back({"connect",
                 Plural(in.nodes, "node", "nodes") + " (" + Plural(in.waves, "wave", "waves") +
                     " of up to " + std::to_string(in.fanout) + ")",
                 static_cast<double>(in.waves) * kConnectWaveS});
  for (const auto& stage : stages) {
    const StageSpec* spec = FindStageSpec(stage);
    if (!spec || !spec->estimate) {
      out.push_back({stage, spec ? "no estimate" : "unknown stage", 0});
      continue;
    }
    StageEstimate e = spec->estimate(in);
    out.push_back({stage, e.work, e.seconds});
  }
  return out;
}

std::string DescribePlan(const Inventory& inv, const std::vector<std::string>& stages,
                         const PlanOptions& o) {
  auto plan = PlanStages(inv, stages, o);
  size_t width = 0;
  for (const auto& p : plan) width = std::max(width, p.work.size());
  std::string s = "plan for " + (inv.name.empty() ? inv.path : inv.name) + ": " +
                  Plural(inv.nodes.size(), "node", "nodes") + ", " +
                  Plural(plan.size(), "stage", "stages") + " (dry run: nothing was contacted)\n";
  double total = 0;
  for (const auto& p : plan) {
    std::string stage = p.stage, work = p.work;
    stage.resize(std::max<size_t>(stage.size(), 9), ' ');
    work.resize(width, ' ');
    s += "  " + stage + work + "  ~" + FormatDuration(p.estimate_s) + "\n";
    total += p.estimate_s;
  }
  s += "  total ~" + FormatDuration(total) + " (rough: assumes nothing times out)\n";
  return s;
}

}  // namespace cc
