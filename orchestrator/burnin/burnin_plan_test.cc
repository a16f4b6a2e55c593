#include "orchestrator/burnin/burnin_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace cc {
namespace {

std::vector<std::string> Nodes(int n) {
  std::vector<std::string> out;
  for (int i = 1; i <= n; ++i) out.push_back("n" + std::to_string(i));
  return out;
}

std::map<NodePair, int> Meetings(const std::vector<std::string>& nodes, int rounds) {
  std::map<NodePair, int> met;
  for (int r = 1; r <= rounds; ++r) {
    std::set<std::string> busy;
    for (const NodePair& p : BurnInRoundPairs(nodes, r)) {
      EXPECT_TRUE(busy.insert(p.first).second) << p.first << " twice in round " << r;
      EXPECT_TRUE(busy.insert(p.second).second) << p.second << " twice in round " << r;
      NodePair key = p.first < p.second ? p : NodePair{p.second, p.first};
      ++met[key];
    }
  }
  return met;
}

// The rule: with an even n every pair meets floor(rounds/(n-1))
// times or once more; with an odd n a bye makes the rotation n rounds long.
TEST(BurnInPlan, EveryPairMeetsFloorOfRoundsOverTheRotationOrOnceMore) {
  for (int n : {2, 3, 4, 5, 6, 7, 8}) {
    int rotation = n % 2 == 0 ? n - 1 : n;
    for (int rounds : {1, 4, 5, 6, 11, 20, 37}) {
      std::map<NodePair, int> met = Meetings(Nodes(n), rounds);
      int lo = rounds / rotation;
      size_t pairs = static_cast<size_t>(n * (n - 1) / 2);
      if (lo > 0) {
        EXPECT_EQ(met.size(), pairs) << n << " nodes, " << rounds << " rounds";
      }
      for (const auto& [pair, times] : met) {
        EXPECT_GE(times, lo) << pair.first << "-" << pair.second << " n=" << n << " r=" << rounds;
        EXPECT_LE(times, lo + 1) << pair.first << "-" << pair.second << " n=" << n
                                 << " r=" << rounds;
      }
    }
  }
}

TEST(BurnInPlan, SixNodesTwentyRoundsMeetEachPairFourTimesAndFiveOfThemOnceMore) {
  std::map<NodePair, int> met = Meetings(Nodes(6), 20);
  ASSERT_EQ(met.size(), 15u);
  int fives = 0;
  for (const auto& [pair, times] : met) fives += times == 5;
  // 20 rounds of 3 pairs = 60 meetings = 15 pairs x 4, none left over.
  EXPECT_EQ(fives, 0);
  for (const auto& [pair, times] : met) EXPECT_EQ(times, 4);
  met = Meetings(Nodes(6), 22);  // two rounds past the 4th rotation: 6 pairs once more
  for (const auto& [pair, times] : met) fives += times == 5;
  EXPECT_EQ(fives, 6);
}

TEST(BurnInPlan, NoPairsForOneNodeOrRoundZero) {
  EXPECT_TRUE(BurnInRoundPairs(Nodes(1), 1).empty());
  EXPECT_TRUE(BurnInRoundPairs(Nodes(4), 0).empty());
  EXPECT_FALSE(BurnInRoundRunsWholeCluster(1, 1));
}

TEST(BurnInPlan, WholeClusterNcclEndsEveryRotation) {
  std::vector<int> six;
  for (int r = 1; r <= 20; ++r) {
    if (BurnInRoundRunsWholeCluster(6, r)) six.push_back(r);
  }
  EXPECT_EQ(six, (std::vector<int>{5, 10, 15, 20}));
  EXPECT_TRUE(BurnInRoundRunsWholeCluster(2, 1));
  EXPECT_TRUE(BurnInRoundRunsWholeCluster(2, 2));
  EXPECT_FALSE(BurnInRoundRunsWholeCluster(5, 4));
  EXPECT_TRUE(BurnInRoundRunsWholeCluster(5, 5));
}

TEST(BurnInPlan, ARoundStartsOnlyWhileRoundsAndTimeAreLeft) {
  BurnInLimit rounds{.rounds = 20};
  EXPECT_TRUE(BurnInMayStartRound(rounds, 20, 1e9));
  EXPECT_FALSE(BurnInMayStartRound(rounds, 21, 0));
  BurnInLimit time{.seconds = 7200};
  EXPECT_TRUE(BurnInMayStartRound(time, 500, 7199));
  EXPECT_FALSE(BurnInMayStartRound(time, 2, 7200)) << "a started round runs out, none starts late";
  EXPECT_FALSE(BurnInMayStartRound(BurnInLimit{}, 1, 0)) << "unbounded is not a plan";
}

TEST(BurnInPlan, EtaIsTheMeanRoundTimesTheRoundsLeft) {
  BurnInLimit rounds{.rounds = 20};
  EXPECT_FALSE(BurnInEtaSeconds(rounds, 0, 0).has_value());
  EXPECT_DOUBLE_EQ(*BurnInEtaSeconds(rounds, 4, 120), 16 * 30.0);
  BurnInLimit time{.seconds = 600};
  EXPECT_EQ(*BurnInRoundsPlanned(time, 4, 120), 20);
  EXPECT_EQ(*BurnInRoundsPlanned(time, 3, 100), 18) << "the last round may end past the time";
  EXPECT_DOUBLE_EQ(*BurnInEtaSeconds(time, 4, 120), 16 * 30.0);
  EXPECT_EQ(BurnInProgressLine(rounds, 5, 120, 3),
            "round 5 of 20, 2.0 min elapsed, about 8.0 min to go, 3 failures so far");
  EXPECT_EQ(BurnInProgressLine(time, 1, 0, 0), "round 1, <1 s elapsed, 0 failures so far");
}

}  // namespace
}  // namespace cc
