// From a burn-in's stored rounds to its figures (BurnInSummary). Pure;
// thread-safe.
//
// Pair results are folded per stage, check, unordered pair and round: one
// attempt per round the pair met in, failed when any direction failed,
// a hang when any direction hung (a hang is counted apart but is a
// failure for the rate). `skip` and `error` results (a check that could
// not run) are not attempts. The value of a round is the pair's lowest
// (busbw: the slower direction is what a job gets).
//
// Each round's health sample is a node result of stage "health", check
// "sample", whose evidence is
//   {"gpus": [{"index", "temperature_c", "clocks_mhz": {"sm"}, "power_w",
//              "clock_event_reasons"}],
//    "counters": {"mlx5_0/1 symbol_error": 5, ...}}
#pragma once

#include <map>
#include <vector>

#include "orchestrator/burnin/burnin_summary.h"
#include "orchestrator/store/store.h"

namespace cc {

struct BurnInRounds {
  std::vector<std::string> nodes;        // inventory order
  std::vector<NodeResult> node_results;  // round >= 1
  std::vector<PairResult> pair_results;  // round >= 1
  std::map<int, double> round_end_s;     // round -> seconds since the start at its end
  int rounds_planned = 0;
  double max_failure_rate = 0;
};

// Outcomes are left at pass: burnin_verdicts.h judges them.
BurnInSummary BurnInSummaryOf(const BurnInRounds& in);

// The health sample of one node for one round (the evidence above), from
// the agent's health reply: its "gpu" section's "gpus" and its "ib"
// section's port counters, named "<device>/<port> <counter>".
nlohmann::json HealthSampleOf(const nlohmann::json& health_reply);

}  // namespace cc
