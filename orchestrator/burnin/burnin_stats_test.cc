#include "orchestrator/burnin/burnin_stats.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

using nlohmann::json;

PairResult Pair(const std::string& src, const std::string& dst, int round, Outcome o,
                std::optional<double> value = std::nullopt) {
  PairResult p;
  p.stage = value ? "nccl" : "ports";
  p.check = value ? "allreduce" : "tcp/29500";
  p.src = src;
  p.dst = dst;
  p.round = round;
  p.outcome = o;
  p.value = value;
  if (value) p.unit = "GB/s";
  return p;
}

TEST(BurnInStats, DirectionsFoldIntoOneAttemptPerRoundInInventoryOrder) {
  BurnInRounds in;
  in.nodes = {"b", "a", "c"};
  in.round_end_s = {{1, 60}, {2, 120}, {3, 180}};
  in.pair_results = {
      Pair("a", "b", 1, Outcome::kPass),  Pair("b", "a", 1, Outcome::kPass),
      Pair("a", "b", 2, Outcome::kPass),  Pair("b", "a", 2, Outcome::kFail),
      Pair("a", "b", 3, Outcome::kHang),  Pair("b", "a", 3, Outcome::kSkip),
      Pair("c", "a", 3, Outcome::kError),
  };
  BurnInSummary s = BurnInSummaryOf(in);
  EXPECT_EQ(s.rounds_done, 3);
  EXPECT_DOUBLE_EQ(s.elapsed_s, 180);
  ASSERT_EQ(s.pairs.size(), 1u) << "an error is not an attempt";
  const PairRate& p = s.pairs[0];
  EXPECT_EQ(p.a, "b") << "inventory order, not alphabetical";
  EXPECT_EQ(p.b, "a");
  EXPECT_EQ(p.attempts, 3);
  EXPECT_EQ(p.failures, 1);
  EXPECT_EQ(p.hangs, 1);
  EXPECT_DOUBLE_EQ(p.rate, 2.0 / 3);
  EXPECT_EQ(p.failed_rounds, (std::vector<int>{2, 3}));
  EXPECT_EQ(p.first_failure(), 2);
  EXPECT_EQ(p.last_failure(), 3);
}

TEST(BurnInStats, BusbwPerRoundIsTheSlowerDirectionWithMinMedianMax) {
  BurnInRounds in;
  in.nodes = {"a", "b"};
  in.round_end_s = {{1, 10}, {2, 20}, {3, 30}};
  in.pair_results = {Pair("a", "b", 1, Outcome::kPass, 40), Pair("b", "a", 1, Outcome::kPass, 30),
                     Pair("a", "b", 2, Outcome::kPass, 50), Pair("a", "b", 3, Outcome::kPass, 45)};
  BurnInSummary s = BurnInSummaryOf(in);
  ASSERT_EQ(s.pairs.size(), 1u);
  const PairRate& p = s.pairs[0];
  ASSERT_EQ(p.values.size(), 3u);
  EXPECT_DOUBLE_EQ(p.values[0].value, 30);
  EXPECT_DOUBLE_EQ(p.values[1].elapsed_s, 20);
  EXPECT_DOUBLE_EQ(*p.value_min, 30);
  EXPECT_DOUBLE_EQ(*p.value_median, 45);
  EXPECT_DOUBLE_EQ(*p.value_max, 50);
  EXPECT_EQ(p.unit, "GB/s");
}

TEST(BurnInStats, HealthSamplesBecomeGpuSeriesAndCountersPerHour) {
  json reply = {
      {"gpu",
       {{"gpus",
         {{{"index", 0},
           {"temperature_c", 41},
           {"power_w", 120.5},
           {"clock_event_reasons", 1},
           {"clocks_mhz", {{"sm", 1980}, {"mem", 2619}, {"sm_max", 1980}}},
           {"uuid", "GPU-x"}}}}}},
      {"ib",
       {{"ports", {{{"device", "mlx5_0"}, {"port", 1}, {"counters", {{"symbol_error", 5}}}}}}}}};
  json sample = HealthSampleOf(reply);
  EXPECT_EQ(sample["counters"]["mlx5_0/1 symbol_error"], 5);
  EXPECT_FALSE(sample["gpus"][0].contains("uuid")) << "a sample keeps only what changes";

  BurnInRounds in;
  in.nodes = {"a"};
  in.round_end_s = {{1, 0}, {2, 1800}, {3, 3600}};
  for (int round = 1; round <= 3; ++round) {
    NodeResult r;
    r.node = "a";
    r.stage = "health";
    r.check = "sample";
    r.round = round;
    r.outcome = Outcome::kPass;
    sample["counters"]["mlx5_0/1 symbol_error"] = 5 + 10 * (round - 1);
    sample["gpus"][0]["temperature_c"] = 40 + round;
    r.evidence = sample;
    in.node_results.push_back(r);
  }
  BurnInSummary s = BurnInSummaryOf(in);
  ASSERT_EQ(s.gpus.size(), 1u);
  ASSERT_EQ(s.gpus[0].samples.size(), 3u);
  EXPECT_EQ(*s.gpus[0].samples[2].temperature_c, 43);
  EXPECT_EQ(*s.gpus[0].samples[0].sm_clock_mhz, 1980);
  EXPECT_EQ(s.gpus[0].samples[0].clock_event_reasons, 1u);
  ASSERT_EQ(s.counters.size(), 1u);
  EXPECT_EQ(s.counters[0].node, "a");
  EXPECT_DOUBLE_EQ(s.counters[0].delta_per_hour, 20);
}

TEST(BurnInStats, AReplyWithoutSectionsGivesAnEmptySample) {
  json sample = HealthSampleOf(json::object());
  EXPECT_TRUE(sample["gpus"].empty());
  EXPECT_TRUE(sample["counters"].empty());
}

}  // namespace
}  // namespace cc
