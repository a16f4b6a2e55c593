// The probe's rank rounds (mpi/probe_rounds.h) must be the NCCL stage's
// node rounds (schedule.h) with rank i standing for the i-th node.
#include <gtest/gtest.h>

#include "mpi/probe_rounds.h"
#include "orchestrator/run/schedule.h"

namespace cc {
namespace {

TEST(MpiProbeRounds, AreTheScheduleRoundsWithRanksForNodes) {
  for (int n = 0; n <= 33; ++n) {
    std::vector<std::string> nodes;
    for (int i = 0; i < n; ++i) nodes.push_back("n" + std::to_string(i));
    std::vector<Round> want = RoundRobinRounds(nodes);
    auto got = ProbeRounds(n);
    ASSERT_EQ(got.size(), want.size()) << "n=" << n;
    for (size_t r = 0; r < want.size(); ++r) {
      ASSERT_EQ(got[r].size(), want[r].size()) << "n=" << n << " round " << r;
      for (size_t k = 0; k < want[r].size(); ++k) {
        EXPECT_EQ(nodes[got[r][k].first], want[r][k].first);
        EXPECT_EQ(nodes[got[r][k].second], want[r][k].second);
      }
    }
  }
}

TEST(MpiProbeRounds, EveryRankPairMeetsOnceAndNoRankTwiceInARound) {
  const int n = 9;
  std::vector<std::vector<int>> met(n, std::vector<int>(n, 0));
  for (const auto& round : ProbeRounds(n)) {
    std::vector<int> busy(n, 0);
    for (auto [a, b] : round) {
      EXPECT_LT(a, b);
      EXPECT_EQ(++busy[a], 1);
      EXPECT_EQ(++busy[b], 1);
      ++met[a][b];
    }
  }
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) EXPECT_EQ(met[a][b], 1) << a << "-" << b;
  }
}

TEST(MpiProbeRounds, APairListIsOneRoundOfDisjointRankPairs) {
  std::vector<std::pair<int, int>> pairs;
  std::string why;
  ASSERT_TRUE(ParsePairList("0-3,2-1", &pairs, &why)) << why;
  EXPECT_EQ(pairs, (std::vector<std::pair<int, int>>{{0, 3}, {1, 2}})) << "lower rank first";
  for (const char* bad : {"", "0-3,", "0-0", "a-1", "0-3,3-1", "1", "0--1", "-1-2"}) {
    EXPECT_FALSE(ParsePairList(bad, &pairs, &why)) << bad;
    EXPECT_NE(why.find("--pairs"), std::string::npos) << bad << ": " << why;
  }
}

}  // namespace
}  // namespace cc
