#include "orchestrator/stages/stage_estimate.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(StageEstimate, DurationsReadAsPeopleSayThem) {
  EXPECT_EQ(FormatDuration(0.2), "<1 s");
  EXPECT_EQ(FormatDuration(45), "45 s");
  EXPECT_EQ(FormatDuration(150), "2.5 min");
  EXPECT_EQ(FormatDuration(7200), "2.0 h");
}

TEST(StageEstimate, RoundsAreCountedInWords) {
  Inventory inv;
  PlanInput in{inv};
  in.pairs = 1;
  in.rounds = 1;
  in.per_round = 1;
  EXPECT_EQ(RoundsPhrase(in), "1 pair in 1 round of 1");
  in.pairs = 10;
  in.rounds = 5;
  in.per_round = 2;
  EXPECT_EQ(RoundsPhrase(in), "10 pairs in 5 rounds of 2");
}

}  // namespace
}  // namespace cc
