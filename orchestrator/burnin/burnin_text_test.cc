#include "orchestrator/burnin/burnin_text.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(BurnInText, PercentNeverRoundsAFailureAwayOrASuccessIn) {
  EXPECT_EQ(PercentText(0), "0%");
  EXPECT_EQ(PercentText(0.15), "15%");
  EXPECT_EQ(PercentText(1), "100%");
  EXPECT_EQ(PercentText(1.0 / 300), "<1%");
  EXPECT_EQ(PercentText(299.0 / 300), ">99%");
  EXPECT_EQ(PercentText(0.005), "1%");
}

TEST(BurnInText, RoundsAreListedAndLongListsCutInTheMiddle) {
  EXPECT_EQ(RoundsText({}), "");
  EXPECT_EQ(RoundsText({5}), "round 5");
  EXPECT_EQ(RoundsText({5, 9, 13}), "rounds 5, 9, 13");
  std::vector<int> many;
  for (int r = 1; r <= 12; ++r) many.push_back(r * 2);
  EXPECT_EQ(RoundsText(many, 4), "rounds 2, 4, 6, \xE2\x80\xA6, 24 (12 in all)");
  EXPECT_EQ(RoundsText({1, 3, 5, 7}, 4), "rounds 1, 3, 5, 7");
}

TEST(BurnInText, ConsecutiveRoundsFoldIntoARangeFromThreeOn) {
  EXPECT_EQ(RoundsText({4, 5, 6, 7}), "rounds 4-7");
  EXPECT_EQ(RoundsText({4, 5, 9}), "rounds 4, 5, 9") << "two in a row are not a range";
  EXPECT_EQ(RoundsText({1, 2, 3, 8, 10, 11, 12, 13}), "rounds 1-3, 8, 10-13");
  std::vector<int> long_run;
  for (int r = 12; r <= 40; ++r) long_run.push_back(r);
  EXPECT_EQ(RoundsText(long_run, 4), "rounds 12-40") << "a range is one item of max_shown";
  EXPECT_EQ(RoundsText({1, 3, 5, 7, 9, 20, 21, 22}, 3),
            "rounds 1, 3, \xE2\x80\xA6, 20-22 (8 in all)");
}

TEST(BurnInText, DurationsInTheirLargestTwoUnits) {
  EXPECT_EQ(DurationText(0), "0s");
  EXPECT_EQ(DurationText(45.4), "45s");
  EXPECT_EQ(DurationText(750), "12m 30s");
  EXPECT_EQ(DurationText(3 * 3600 + 12 * 60 + 5), "3h 12m");
}

}  // namespace
}  // namespace cc
