// What a burn-in (`clustercheck burnin`) measured, per pair and per node,
// round after round: the figures its verdicts, terminal lines, HTML page
// and `diff` are made from. Built from a stored run (BurnInSummaryOf in
// burnin_stats.h); pure data.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/outcome.h"

namespace cc {

// One pair check over every round the pair met in (round >= 1).
struct PairRate {
  std::string stage;  // "ports", "nccl", ...
  std::string check;  // "tcp/29500", "allreduce", ...
  std::string a, b;   // a before b in inventory order (undirected checks)
  int attempts = 0;   // results of the pair and check, one per round met
  int failures = 0;   // `fail` results (hangs counted apart)
  int hangs = 0;
  double rate = 0;                 // (failures + hangs) / attempts; 0 when no attempt
  std::vector<int> rounds;         // every round it was tested in, ascending
  std::vector<int> failed_rounds;  // rounds whose result was fail or hang, ascending
  // Value per round tested (busbw GB/s for nccl), in round order; empty
  // when the check stores none.
  struct Point {
    int round = 0;
    double elapsed_s = 0;  // since the burn-in started
    double value = 0;
  };
  std::vector<Point> values;
  std::optional<double> value_min, value_median, value_max;
  std::string unit;  // "GB/s" or ""
  // The judgement of the rate (burnin_verdicts.h): pass (never failed),
  // warn (flaky at or under max_failure_rate), flaky above it is fail,
  // fail (failed every round).
  Outcome outcome = Outcome::kPass;
  int first_failure() const { return failed_rounds.empty() ? 0 : failed_rounds.front(); }
  int last_failure() const { return failed_rounds.empty() ? 0 : failed_rounds.back(); }
};

// A node's GPU readings of one round (the health sample).
struct GpuSample {
  int round = 0;
  double elapsed_s = 0;
  int gpu = 0;  // index on the node
  std::optional<double> temperature_c;
  std::optional<double> sm_clock_mhz;
  std::optional<double> power_w;
  uint64_t clock_event_reasons = 0;  // NVML bitmask, 0 when unknown
};

// One counter of one node (an IB port counter, an NVLink error count), read
// every round.
struct CounterSeries {
  std::string node;
  std::string counter;  // "mlx5_0/1 symbol_error"
  struct Point {
    int round = 0;
    double elapsed_s = 0;
    double value = 0;
  };
  std::vector<Point> points;
  // (last - first) / hours between them; 0 with fewer than two points.
  double delta_per_hour = 0;
};

struct BurnInSummary {
  int rounds_done = 0;     // rounds stored whole
  int rounds_planned = 0;  // --rounds, or 0 with --for alone
  double elapsed_s = 0;    // first round's start to the last one's end
  double max_failure_rate = 0;
  std::vector<std::string> nodes;  // inventory order
  std::vector<PairRate> pairs;     // by stage, check, then inventory order of a, b
  struct NodeGpus {
    std::string node;
    std::vector<GpuSample> samples;  // by round, then gpu
  };
  std::vector<NodeGpus> gpus;
  std::vector<CounterSeries> counters;
};

}  // namespace cc
