#include "orchestrator/run/probe_pacer.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

std::vector<double> Batch(double ms, size_t n = 20) { return std::vector<double>(n, ms); }

TEST(ProbePacer, StartsAtTheBound) {
  EXPECT_EQ(ProbePacer({.max_window = 8}).window(), 8);
  EXPECT_EQ(ProbePacer({.max_window = 1}).window(), 1);
}

TEST(ProbePacer, TheWindowShrinksWhenLatencyRises) {
  ProbePacer p({.max_window = 8});
  p.OnBatch(Batch(2));  // calm: baseline 2 ms, stays at the bound
  EXPECT_EQ(p.window(), 8);
  p.OnBatch(Batch(400));
  EXPECT_EQ(p.window(), 4);
  p.OnBatch(Batch(900));
  EXPECT_EQ(p.window(), 2);
  p.OnBatch(Batch(900));
  EXPECT_EQ(p.window(), 1);
  p.OnBatch(Batch(900));
  EXPECT_EQ(p.window(), 1);  // never below one sender
}

TEST(ProbePacer, TheWindowGrowsOneStepPerCalmBatchWhenLatencyFalls) {
  ProbePacer p({.max_window = 8});
  p.OnBatch(Batch(2));
  p.OnBatch(Batch(500));
  p.OnBatch(Batch(500));
  ASSERT_EQ(p.window(), 2);
  p.OnBatch(Batch(3));
  EXPECT_EQ(p.window(), 3);
  p.OnBatch(Batch(3));
  EXPECT_EQ(p.window(), 4);
  for (int i = 0; i < 10; ++i) p.OnBatch(Batch(3));
  EXPECT_EQ(p.window(), 8);  // never above the bound
}

TEST(ProbePacer, HoldsBetweenCalmAndCongested) {
  ProbePacer p({.max_window = 8, .congested_factor = 3, .floor_ms = 1});
  p.OnBatch(Batch(100));
  p.OnBatch(Batch(1000));
  ASSERT_EQ(p.window(), 4);
  p.OnBatch(Batch(250));  // above 2x (calm), below 3x (congested)
  EXPECT_EQ(p.window(), 4);
}

TEST(ProbePacer, FastConnectsUnderTheFloorAreNeverCongestion) {
  ProbePacer p({.max_window = 8, .floor_ms = 50});
  p.OnBatch(Batch(0.2));
  p.OnBatch(Batch(30));  // 150x the baseline, but 30 ms is no overload
  EXPECT_EQ(p.window(), 8);
}

TEST(ProbePacer, TheSlowTenthDecidesNotTheMedian) {
  ProbePacer p({.max_window = 8});
  p.OnBatch(Batch(2));
  std::vector<double> b = Batch(2, 80);
  for (int i = 0; i < 20; ++i) b.push_back(1000);  // a fifth of the connects stall
  p.OnBatch(b);
  EXPECT_EQ(p.window(), 4);
}

TEST(ProbePacer, AnEmptyBatchChangesNothing) {
  ProbePacer p({.max_window = 8});
  p.OnBatch({});
  EXPECT_EQ(p.window(), 8);
  EXPECT_EQ(p.baseline_ms(), 0);
}

TEST(Percentile, NearestRank) {
  EXPECT_EQ(Percentile({}, 0.9), 0);
  EXPECT_EQ(Percentile({5}, 0.9), 5);
  EXPECT_EQ(Percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9), 9);
  EXPECT_EQ(Percentile({10, 1, 2}, 0.5), 2);
}

}  // namespace
}  // namespace cc
