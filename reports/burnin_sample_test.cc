#include "reports/burnin_sample_test.h"

#include <algorithm>
#include <cmath>

namespace cc::testdata {
namespace {

constexpr int kRounds = 20;
constexpr double kRoundS = 360;

// The median of the round's busbw values, as BurnInSummaryOf fills it.
void FillValueStats(PairRate& p) {
  std::vector<double> v;
  for (const auto& pt : p.values) v.push_back(pt.value);
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  p.value_min = v.front();
  p.value_max = v.back();
  p.value_median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

PairRate Rate(const std::string& stage, const std::string& check, const std::string& a,
              const std::string& b, const std::vector<int>& failed) {
  PairRate p;
  p.stage = stage;
  p.check = check;
  p.a = a;
  p.b = b;
  for (int r = 1; r <= kRounds; ++r) p.rounds.push_back(r);
  p.attempts = kRounds;
  p.failed_rounds = failed;
  p.failures = static_cast<int>(failed.size());
  p.rate = static_cast<double>(p.failures) / p.attempts;
  p.outcome = failed.empty() ? Outcome::kPass : Outcome::kWarn;
  return p;
}

bool Hot(const std::string& node, int round) { return node == "gpu05" && round >= 12; }

}  // namespace

BurnInSummary SampleBurnIn() {
  BurnInSummary s;
  s.rounds_done = s.rounds_planned = kRounds;
  s.elapsed_s = kRounds * kRoundS;
  s.max_failure_rate = 0.2;
  s.nodes = {"gpu01", "gpu02", "gpu03", "gpu04", "gpu05", "gpu06"};
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    for (size_t j = i + 1; j < s.nodes.size(); ++j) {
      const std::string &a = s.nodes[i], &b = s.nodes[j];
      bool flaky = a == "gpu01" && b == "gpu03";
      s.pairs.push_back(Rate("ports", "tcp/29500", a, b,
                             flaky ? std::vector<int>{5, 9, 13} : std::vector<int>{}));
    }
  }
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    for (size_t j = i + 1; j < s.nodes.size(); ++j) {
      const std::string &a = s.nodes[i], &b = s.nodes[j];
      PairRate p = Rate("nccl", "allreduce", a, b, {});
      p.unit = "GB/s";
      for (int r = 1; r <= kRounds; ++r) {
        // A fixed wobble per pair and round, so lines are told apart.
        double v = 180 + 2.5 * std::sin(r * 0.9 + i * 1.3 + j * 0.7);
        if (Hot(a, r) || Hot(b, r)) v -= 20 + 1.5 * (r - 12);
        p.values.push_back({r, (r - 0.5) * kRoundS, v});
      }
      FillValueStats(p);
      s.pairs.push_back(p);
    }
  }
  for (const auto& node : s.nodes) {
    BurnInSummary::NodeGpus g{node, {}};
    for (int r = 1; r <= kRounds; ++r) {
      for (int gpu = 0; gpu < 4; ++gpu) {
        GpuSample x;
        x.round = r;
        x.elapsed_s = (r - 0.2) * kRoundS;
        x.gpu = gpu;
        x.temperature_c = 60 + gpu * 0.8 + std::sin(r + gpu) * 0.6;
        x.sm_clock_mhz = 1980;
        x.power_w = 650;
        if (node == "gpu05") {
          x.temperature_c = 62 + (r - 1) * 1.45 + gpu * 0.5;
          if (Hot(node, r)) {
            x.sm_clock_mhz = 1980 - 45 * (r - 11) - gpu * 10;
            x.clock_event_reasons = 0x40 | (r >= 15 ? 0x20 : 0);
          }
        }
        g.samples.push_back(x);
      }
    }
    s.gpus.push_back(g);
  }
  CounterSeries sym{"gpu02", "mlx5_0/1 symbol_error", {}, 0};
  CounterSeries down{"gpu04", "mlx5_1/1 link_downed", {}, 0};
  for (int r = 1; r <= kRounds; ++r) {
    sym.points.push_back({r, r * kRoundS, static_cast<double>(r / 2 * 2)});
    down.points.push_back({r, r * kRoundS, 0});
  }
  sym.delta_per_hour = (sym.points.back().value - sym.points.front().value) /
                       ((sym.points.back().elapsed_s - sym.points.front().elapsed_s) / 3600);
  s.counters = {sym, down};
  return s;
}

}  // namespace cc::testdata
