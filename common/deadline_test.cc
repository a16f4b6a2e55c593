#include "common/deadline.h"

#include <gtest/gtest.h>

#include "common/fake_clock.h"

namespace cc {
namespace {

TEST(Deadline, IsJudgedByTheClockItWasMadeOn) {
  FakeClock clock;
  Deadline d = Deadline::InSeconds(clock, 2);
  EXPECT_FALSE(d.Passed());
  EXPECT_EQ(d.RemainingMs(), 2000);
  clock.Advance(Millis(1500));
  EXPECT_EQ(d.RemainingMs(), 500);
  // A slice of it ends sooner; a longer slice is the deadline itself.
  EXPECT_EQ(d.Within(Millis(200)).at(), clock.Now() + Millis(200));
  EXPECT_EQ(d.Within(Millis(900)).at(), d.at());
  EXPECT_EQ(&d.Within(Millis(200)).clock(), &clock);
  // Moved later, e.g. by a slow shell's startup.
  EXPECT_EQ(d.Extended(Millis(1000)).RemainingMs(), 1500);
  clock.Advance(Millis(500));
  EXPECT_TRUE(d.Passed());
  EXPECT_EQ(d.RemainingMs(), 0);
  clock.Advance(Millis(500));
  EXPECT_EQ(d.RemainingMs(), 0) << "never negative";
}

TEST(Deadline, WithoutAClockItIsOnTheRealOne) {
  Deadline d = Deadline::In(Millis(60000));
  EXPECT_EQ(&d.clock(), &RealClock());
  EXPECT_FALSE(d.Passed());
  EXPECT_GT(d.RemainingMs(), 50000);
  EXPECT_TRUE(Deadline::In(Millis(0)).Passed());
}

}  // namespace
}  // namespace cc
