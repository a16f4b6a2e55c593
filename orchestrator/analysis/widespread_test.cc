#include "orchestrator/analysis/widespread.h"

#include <gtest/gtest.h>

#include <random>

namespace cc {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

std::string N(int i) { return "n" + std::to_string(i); }

Pairs AllPairs(int n) {
  Pairs out;
  for (int a = 1; a <= n; ++a) {
    for (int b = a + 1; b <= n; ++b) out.push_back({N(a), N(b)});
  }
  return out;
}

template <typename F>
Pairs Where(const Pairs& all, F bad) {
  Pairs out;
  for (const auto& p : all) {
    if (bad(p)) out.push_back(p);
  }
  return out;
}

TEST(Widespread, FailuresSpreadEvenlyOverMostNodesAreWidespread) {
  // 64 nodes, one pair in ten failing at random: every node has a few.
  Pairs all = AllPairs(64);
  std::mt19937 rng(17);
  std::bernoulli_distribution bad(0.1);
  Pairs failed = Where(all, [&](const auto&) { return bad(rng); });
  Spread s = JudgeSpread(all, failed);
  EXPECT_TRUE(s.widespread) << "worst " << s.worst_node << " " << s.worst_node_share << " mean "
                            << s.mean_node_share;
  EXPECT_EQ(s.tested_pairs, 2016u);
  EXPECT_EQ(s.failed_pairs, failed.size());
  EXPECT_EQ(s.nodes_touched, 64u);
  EXPECT_TRUE(s.standouts.empty());
  EXPECT_NEAR(s.share, 0.1, 0.03);
}

TEST(Widespread, EvenSpreadHoldsAtEveryRateAndSeed) {
  // A property over rates down to 3% (each node ~2 failures): random
  // even noise is never mistaken for a node that stands out.
  Pairs all = AllPairs(48);
  for (double rate : {0.03, 0.05, 0.2, 0.4}) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
      std::mt19937 rng(seed);
      std::bernoulli_distribution bad(rate);
      Pairs failed = Where(all, [&](const auto&) { return bad(rng); });
      EXPECT_TRUE(JudgeSpread(all, failed).widespread) << "rate " << rate << " seed " << seed;
    }
  }
}

TEST(Widespread, OneBadNodeAmongManyIsNotWidespreadAndStandsOut) {
  // n7 fails with every partner; a few other pairs fail here and there.
  Pairs all = AllPairs(32);
  Pairs failed = Where(all, [](const auto& p) { return p.first == "n7" || p.second == "n7"; });
  failed.push_back({"n1", "n2"});
  failed.push_back({"n3", "n20"});
  Spread s = JudgeSpread(all, failed);
  EXPECT_FALSE(s.widespread);
  EXPECT_EQ(s.standouts, std::vector<std::string>{"n7"});
  EXPECT_EQ(s.worst_node, "n7");
  EXPECT_DOUBLE_EQ(s.worst_node_share, 1.0);
}

TEST(Widespread, ANodeInMostFailingPairsStandsOutEvenInASmallCluster) {
  // n3 fails with all 5 partners of 6 nodes: its share (1.0) is only 3x
  // the mean (1/3), but it is in every failing pair.
  Pairs all = AllPairs(6);
  Pairs failed = Where(all, [](const auto& p) { return p.first == "n3" || p.second == "n3"; });
  Spread s = JudgeSpread(all, failed);
  EXPECT_FALSE(s.widespread);
  EXPECT_EQ(s.standouts, std::vector<std::string>{"n3"});
}

TEST(Widespread, AFewFailingPairsAreNotWidespread) {
  Pairs all = AllPairs(16);
  Pairs failed = {{"n1", "n2"}, {"n5", "n9"}, {"n11", "n16"}};
  Spread s = JudgeSpread(all, failed);
  EXPECT_FALSE(s.widespread);
  EXPECT_EQ(s.failed_pairs, 3u);
  EXPECT_EQ(s.nodes_touched, 6u);
  EXPECT_TRUE(s.standouts.empty()) << "three separate links: no node stands out";
}

TEST(Widespread, FailuresOnAMinorityOfNodesAreNotWidespread) {
  // Every pair among n1..n5 fails (a bad rack): 10 pairs, 5 of 20 nodes.
  Pairs all = AllPairs(20);
  auto in_rack = [](const std::string& n) { return n.size() == 2 && n[1] >= '1' && n[1] <= '5'; };
  Pairs failed = Where(all, [&](const auto& p) { return in_rack(p.first) && in_rack(p.second); });
  ASSERT_EQ(failed.size(), 10u);
  EXPECT_FALSE(JudgeSpread(all, failed).widespread);
}

TEST(Widespread, MostPairsFailingIsWidespreadWhateverTheSpread) {
  Pairs all = AllPairs(4);
  Pairs failed = Where(all, [](const auto& p) { return !(p.first == "n1" && p.second == "n2"); });
  Spread s = JudgeSpread(all, failed);
  EXPECT_TRUE(s.widespread);
  EXPECT_EQ(s.failed_pairs, 5u);
  EXPECT_EQ(s.tested_pairs, 6u);
}

TEST(Widespread, BothDirectionsOfAPairCountOnce) {
  Pairs all = AllPairs(4);
  Pairs both = all;
  for (const auto& [a, b] : all) both.push_back({b, a});
  Spread s = JudgeSpread(both, both);
  EXPECT_EQ(s.tested_pairs, 6u);
  EXPECT_EQ(s.failed_pairs, 6u);
  EXPECT_TRUE(s.widespread);
}

TEST(Widespread, NothingFailingIsNothing) {
  Spread s = JudgeSpread(AllPairs(8), {});
  EXPECT_FALSE(s.widespread);
  EXPECT_EQ(s.failed_pairs, 0u);
  EXPECT_EQ(s.tested_pairs, 28u);
  EXPECT_EQ(JudgeSpread({}, {}).tested_pairs, 0u);
}

}  // namespace
}  // namespace cc
