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
  EXPECT_EQ(RoundsText({1, 2, 3, 4}, 4), "rounds 1, 2, 3, 4");
}

TEST(BurnInText, DurationsInTheirLargestTwoUnits) {
  EXPECT_EQ(DurationText(0), "0s");
  EXPECT_EQ(DurationText(45.4), "45s");
  EXPECT_EQ(DurationText(750), "12m 30s");
  EXPECT_EQ(DurationText(3 * 3600 + 12 * 60 + 5), "3h 12m");
}

}  // namespace
}  // namespace cc
