#include "orchestrator/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "orchestrator/inventory/stage_settings.h"
#include "orchestrator/run/schedule.h"
#include "orchestrator/stages/ports/ports_plan.h"

namespace cc {
namespace {

// Rough costs of one step, seen on small clusters; they make the estimate
// an order of magnitude, not a promise.
constexpr double kConnectWaveS = 3;   // ssh + push + hello, one window
constexpr double kFactsWaveS = 5;     // agent facts, one window
constexpr double kNcclIntraS = 30;    // intra-node AllReduce over sizes
constexpr double kNcclRoundS = 20;    // one round of pair AllReduces
constexpr double kNcclClusterS = 30;  // the whole-cluster AllReduce
constexpr double kMpiRoundS = 10;     // one round of MPI ping-pongs
constexpr double kNicsRoundS = 2;     // one round of reachability probes

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The ports stage's own settings (ports_plan.h), defaults where the
// inventory's are bad (the run itself names those).
PortsEstimate PortsStageEstimate(const Inventory& inv, size_t rounds) {
  Result<PortsSettings> s = ReadPortsSettings(inv.StageSettings("ports"));
  std::optional<int> ssh_port;
  if (!inv.nodes.empty() && inv.transport != "local") {
    ssh_port = inv.nodes.front().ssh.port;
  }
  return EstimatePorts(s.ok() ? *s : PortsSettings{}, ssh_port, rounds);
}

std::string RoundsPhrase(size_t pairs, size_t rounds, size_t per_round) {
  return Plural(pairs, "pair", "pairs") + " in " + Plural(rounds, "round", "rounds") + " of " +
         std::to_string(per_round);
}

}  // namespace

std::string FormatDuration(double s) {
  char buf[32];
  if (s < 1) return "<1 s";
  if (s < 90) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else if (s < 90 * 60) {
    std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  }
  return buf;
}

std::vector<StagePlan> PlanStages(const Inventory& inv, const std::vector<std::string>& stages,
                                  const PlanOptions& o) {
  size_t n = inv.nodes.size();
  size_t fanout = static_cast<size_t>(std::max(1, o.fanout > 0 ? o.fanout : inv.ssh.fanout));
  size_t waves = n == 0 ? 0 : (n + fanout - 1) / fanout;
  std::vector<std::string> names;
  for (const auto& node : inv.nodes) names.push_back(node.name);
  auto rounds = RoundRobinRounds(names);
  size_t pairs = n * (n > 0 ? n - 1 : 0) / 2;
  size_t per_round = rounds.empty() ? 0 : rounds.front().size();

  std::vector<StagePlan> out;
  out.push_back({"connect",
                 Plural(n, "node", "nodes") + " (" + Plural(waves, "wave", "waves") + " of up to " +
                     std::to_string(fanout) + ")",
                 waves * kConnectWaveS});
  for (const auto& stage : stages) {
    StagePlan p{stage, "", 0};
    if (stage == "facts") {
      p.work = Plural(n, "node", "nodes");
      p.estimate_s = waves * kFactsWaveS;
    } else if (stage == "parity") {
      p.work = Plural(n, "node", "nodes") + ", judged here (no remote work)";
    } else if (stage == "nics") {
      p.work = Plural(n, "node", "nodes") + ", " + RoundsPhrase(pairs, rounds.size(), per_round);
      p.estimate_s = kFactsWaveS + rounds.size() * kNicsRoundS;
    } else if (stage == "ports") {
      PortsEstimate e = PortsStageEstimate(inv, rounds.size());
      size_t probes = n * (n > 0 ? n - 1 : 0) * e.ports_per_pair;
      p.work = Plural(n * (n > 0 ? n - 1 : 0), "ordered pair", "ordered pairs") + " x " +
               Plural(e.ports_per_pair, "port", "ports") + " = " +
               Plural(probes, "probe", "probes");
      p.estimate_s = e.healthy_s;
    } else if (stage == "nccl") {
      p.work = "intra-node on " + Plural(n, "node", "nodes") + ", " +
               RoundsPhrase(pairs, rounds.size(), per_round) + ", then all " + std::to_string(n);
      p.estimate_s = kNcclIntraS + rounds.size() * kNcclRoundS + (n > 2 ? kNcclClusterS : 0);
    } else if (stage == "mpi") {
      p.work = "one mpirun: MPI_Allreduce, then ping-pong " +
               RoundsPhrase(pairs, rounds.size(), per_round);
      p.estimate_s = rounds.size() * kMpiRoundS + kMpiRoundS;
    } else if (stage == "sleep") {
      double s = inv.StageSettings("sleep").value("seconds", 5.0);
      p.work = Plural(n, "node", "nodes") + " sleep " + FormatDuration(s);
      p.estimate_s = s;
    } else {
      p.work = "unknown stage";
    }
    out.push_back(p);
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
