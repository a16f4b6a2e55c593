#include "orchestrator/burnin/burnin_diff.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

PairRate Rate(const std::string& a, const std::string& b, int failures, int attempts = 20,
              std::vector<int> failed_rounds = {}) {
  PairRate p;
  p.stage = "ports";
  p.check = "tcp/29500";
  p.a = a;
  p.b = b;
  p.attempts = attempts;
  p.failures = failures;
  p.rate = attempts ? static_cast<double>(failures) / attempts : 0;
  p.failed_rounds = std::move(failed_rounds);
  return p;
}

BurnInSummary With(std::vector<PairRate> pairs) {
  BurnInSummary s;
  s.pairs = std::move(pairs);
  return s;
}

TEST(BurnInDiff, AFirstFailureIsWorseEvenWithinTheTolerance) {
  auto cs = DiffBurnInRates(With({Rate("gpu01", "gpu03", 0)}),
                            With({Rate("gpu01", "gpu03", 1, 20, {7})}));
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].kind, RateChange::Kind::kWorse);
  EXPECT_EQ(cs[0].ToString(),
            "worse  ports tcp/29500 gpu01 <-> gpu03: 0% of 20 -> 5% of 20 (round 7)");
}

TEST(BurnInDiff, AChangeOfExactlyTheToleranceIsLeftOut) {
  // 1 -> 2 of 20 is 5 points: the default tolerance, not beyond it.
  EXPECT_TRUE(DiffBurnInRates(With({Rate("a", "b", 1)}), With({Rate("a", "b", 2)})).empty());
  EXPECT_TRUE(DiffBurnInRates(With({Rate("a", "b", 2)}), With({Rate("a", "b", 1)})).empty());
  auto cs = DiffBurnInRates(With({Rate("a", "b", 1)}), With({Rate("a", "b", 3)}));
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].kind, RateChange::Kind::kWorse);
  // A tighter tolerance counts the 5 points.
  EXPECT_EQ(DiffBurnInRates(With({Rate("a", "b", 1)}), With({Rate("a", "b", 2)}), 0.04).size(), 1u);
}

TEST(BurnInDiff, NoLongerFailingIsBetter) {
  auto cs = DiffBurnInRates(With({Rate("a", "b", 1)}), With({Rate("a", "b", 0)}));
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].kind, RateChange::Kind::kBetter);
  EXPECT_EQ(cs[0].ToString(), "better ports tcp/29500 a <-> b: 5% of 20 -> 0% of 20");
}

TEST(BurnInDiff, PairsInOneSideOnlyAreNewOrGone) {
  auto cs = DiffBurnInRates(With({Rate("a", "b", 0), Rate("a", "c", 2, 20, {3, 4})}),
                            With({Rate("a", "b", 0), Rate("a", "d", 0, 10)}));
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].kind, RateChange::Kind::kNew);
  EXPECT_EQ(cs[0].ToString(), "new    ports tcp/29500 a <-> d: 0% of 10");
  EXPECT_EQ(cs[1].kind, RateChange::Kind::kGone);
  EXPECT_EQ(cs[1].ToString(), "gone   ports tcp/29500 a <-> c: was 10% of 20 (rounds 3, 4)");
}

TEST(BurnInDiff, APairListedTheOtherWayRoundIsTheSamePair) {
  EXPECT_TRUE(DiffBurnInRates(With({Rate("a", "b", 0)}), With({Rate("b", "a", 0)})).empty());
  auto cs = DiffBurnInRates(With({Rate("a", "b", 0)}), With({Rate("b", "a", 4)}));
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].kind, RateChange::Kind::kWorse);
}

TEST(BurnInDiff, HangsCountAsFailures) {
  PairRate hung = Rate("a", "b", 0);
  hung.hangs = 1;
  hung.rate = 0.05;
  auto cs = DiffBurnInRates(With({Rate("a", "b", 0)}), With({hung}));
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].failures_after, 1);
}

TEST(BurnInDiff, WorstComesFirstAndLargestChangesLead) {
  BurnInSummary before = With({Rate("a", "b", 0), Rate("a", "c", 0), Rate("a", "d", 10),
                               Rate("a", "e", 4), Rate("b", "c", 0)});
  BurnInSummary after = With({Rate("a", "b", 2), Rate("a", "c", 10), Rate("a", "d", 0),
                              Rate("a", "e", 1), Rate("c", "d", 5)});
  auto cs = DiffBurnInRates(before, after);
  std::vector<std::string> order;
  for (const auto& c : cs) order.push_back(RateChangeKindName(c.kind) + (" " + c.a + c.b));
  EXPECT_EQ(order, (std::vector<std::string>{"worse ac", "worse ab", "new cd", "gone bc",
                                             "better ad", "better ae"}));
}

TEST(BurnInDiff, RenderLeadsWithTheCountsAndJsonHasBothSides) {
  auto cs = DiffBurnInRates(With({Rate("a", "b", 0), Rate("a", "c", 0)}),
                            With({Rate("a", "b", 3, 20, {5, 9, 13}), Rate("a", "d", 0)}));
  EXPECT_EQ(RenderBurnInDiff(cs),
            "burn-in rates: 1 worse, 1 new, 1 gone, 0 better\n"
            "  worse  ports tcp/29500 a <-> b: 0% of 20 -> 15% of 20 (rounds 5, 9, 13)\n"
            "  new    ports tcp/29500 a <-> d: 0% of 20\n"
            "  gone   ports tcp/29500 a <-> c: was 0% of 20\n");
  auto j = BurnInDiffToJson(cs);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["kind"], "worse");
  EXPECT_EQ(j[0]["before"]["failures"], 0);
  EXPECT_EQ(j[0]["after"]["failures"], 3);
  EXPECT_DOUBLE_EQ(j[0]["after"]["rate"].get<double>(), 0.15);
  EXPECT_EQ(j[0]["failed_rounds"], (std::vector<int>{5, 9, 13}));
  EXPECT_FALSE(j[1].contains("before"));
  EXPECT_FALSE(j[2].contains("after"));
  EXPECT_EQ(RenderBurnInDiff({}), "burn-in rates: 0 worse, 0 new, 0 gone, 0 better\n");
}

}  // namespace
}  // namespace cc
