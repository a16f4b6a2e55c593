#include "orchestrator/burnin/burnin_plan.h"

#include <algorithm>
#include <cmath>

#include "orchestrator/stages/stage_estimate.h"

namespace cc {

Round BurnInRoundPairs(const std::vector<std::string>& nodes, int round) {
  if (nodes.size() < 2 || round < 1) return {};
  std::vector<Round> rotation = RoundRobinRounds(nodes);
  if (rotation.empty()) return {};
  return rotation[static_cast<size_t>(round - 1) % rotation.size()];
}

bool BurnInRoundRunsWholeCluster(size_t nodes, int round) {
  if (nodes < 2 || round < 1) return false;
  // RoundRobinRounds gives n-1 rounds for even n and n for odd n (a bye).
  size_t rotation = nodes % 2 == 0 ? nodes - 1 : nodes;
  return static_cast<size_t>(round) % rotation == 0;
}

bool BurnInMayStartRound(const BurnInLimit& limit, int next_round, double elapsed_s) {
  if (limit.rounds && next_round > *limit.rounds) return false;
  if (limit.seconds && elapsed_s >= *limit.seconds) return false;
  return limit.rounds || limit.seconds;
}

std::optional<int> BurnInRoundsPlanned(const BurnInLimit& limit, int rounds_done,
                                       double elapsed_s) {
  std::optional<int> by_time;
  if (limit.seconds && rounds_done > 0 && elapsed_s > 0) {
    double per_round = elapsed_s / rounds_done;
    // Rounds start while time is left, so the last one may end past it.
    by_time = std::max(rounds_done, static_cast<int>(std::ceil(*limit.seconds / per_round - 1e-9)));
  }
  if (limit.rounds && by_time) return std::min(*limit.rounds, *by_time);
  if (limit.rounds) return limit.rounds;
  return by_time;
}

std::optional<double> BurnInEtaSeconds(const BurnInLimit& limit, int rounds_done,
                                       double elapsed_s) {
  std::optional<int> planned = BurnInRoundsPlanned(limit, rounds_done, elapsed_s);
  if (!planned || rounds_done <= 0) return std::nullopt;
  double per_round = elapsed_s / rounds_done;
  return std::max(0, *planned - rounds_done) * per_round;
}

std::string BurnInProgressLine(const BurnInLimit& limit, int round, double elapsed_s,
                               int failures_so_far) {
  std::string line = "round " + std::to_string(round);
  if (std::optional<int> planned = BurnInRoundsPlanned(limit, round - 1, elapsed_s)) {
    line += " of " + std::to_string(std::max(*planned, round));
  }
  line += ", " + FormatDuration(elapsed_s) + " elapsed";
  if (std::optional<double> eta = BurnInEtaSeconds(limit, round - 1, elapsed_s)) {
    line += ", about " + FormatDuration(*eta) + " to go";
  }
  line += ", " + Plural(static_cast<size_t>(failures_so_far), "failure", "failures") + " so far";
  return line;
}

}  // namespace cc
