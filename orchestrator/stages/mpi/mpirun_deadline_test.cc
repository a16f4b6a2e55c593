#include "orchestrator/stages/mpi/mpirun_deadline.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(MpirunDeadline, RoundsOfTheCircleMethod) {
  EXPECT_EQ(MpiRoundCount(1), 0);
  EXPECT_EQ(MpiRoundCount(2), 1);
  EXPECT_EQ(MpiRoundCount(5), 5);
  EXPECT_EQ(MpiRoundCount(128), 127);
}

TEST(MpirunDeadline, CapGrowsWithTheRounds) {
  MpirunDeadlines small = MpiJobDeadlines(4, 120, 10);
  MpirunDeadlines big = MpiJobDeadlines(128, 120, 10);
  EXPECT_DOUBLE_EQ(small.idle_s, 120);
  EXPECT_DOUBLE_EQ(big.idle_s, 120);  // a hang is found as fast at any size
  EXPECT_DOUBLE_EQ(small.total_s, 120 + 5 * 10);
  EXPECT_DOUBLE_EQ(big.total_s, 120 + 129 * 10);
  EXPECT_NE(big.cap_why.find("127 rounds"), std::string::npos);
}

TEST(MpirunDeadline, SteadyProgressPastTheOldFixedDeadlineKeepsGoing) {
  // issue 17: 128 ranks, 200 s in, the last line 1 s ago: working, not hung.
  MpirunDeadlines d = MpiJobDeadlines(128, 120, 10);
  MpirunDecision k = DecideMpirunStop(d, 200, 1);
  EXPECT_EQ(k.stop, MpirunStop::kKeepGoing);
  EXPECT_TRUE(k.why.empty());
}

TEST(MpirunDeadline, NoLineForTheIdleDeadlineIsAHang) {
  MpirunDeadlines d = MpiJobDeadlines(128, 120, 10);
  MpirunDecision k = DecideMpirunStop(d, 300, 120);
  EXPECT_EQ(k.stop, MpirunStop::kIdle);
  EXPECT_NE(k.why.find("no new line"), std::string::npos);
  EXPECT_NE(k.why.find("120 s"), std::string::npos);
  // Also before any line came (a launch that never starts).
  EXPECT_EQ(DecideMpirunStop(d, 121, 121).stop, MpirunStop::kIdle);
}

TEST(MpirunDeadline, TheCapStopsEvenAJobThatStillPrints) {
  MpirunDeadlines d = MpiJobDeadlines(4, 60, 10);  // cap 110 s
  EXPECT_EQ(DecideMpirunStop(d, 109, 0.5).stop, MpirunStop::kKeepGoing);
  MpirunDecision k = DecideMpirunStop(d, 110, 0.5);
  EXPECT_EQ(k.stop, MpirunStop::kCap);
  EXPECT_NE(k.why.find("110 s"), std::string::npos);
  EXPECT_NE(k.why.find("3 rounds"), std::string::npos);
}

TEST(MpirunDeadline, FixedIsTheOldRule) {
  MpirunDeadlines d = FixedMpirunDeadlines(60);
  EXPECT_EQ(DecideMpirunStop(d, 59, 1).stop, MpirunStop::kKeepGoing);
  EXPECT_NE(DecideMpirunStop(d, 60, 1).stop, MpirunStop::kKeepGoing);
}

}  // namespace
}  // namespace cc
