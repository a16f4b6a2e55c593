#include "common/fake_clock.h"

#include <gtest/gtest.h>

#include <thread>

namespace cc {
namespace {

using std::chrono::seconds;

TEST(FakeClock, TimeMovesOnlyWhenAdvancedOrSlept) {
  FakeClock clock;
  Clock::time_point t0 = clock.Now();
  EXPECT_EQ(clock.Now(), t0);
  clock.Advance(seconds(5));
  EXPECT_EQ(clock.Now() - t0, seconds(5));
  clock.SleepFor(seconds(20));
  EXPECT_EQ(clock.Elapsed(), seconds(25));
  clock.SleepUntil(t0);  // in the past: no time passes
  EXPECT_EQ(clock.Elapsed(), seconds(25));
}

TEST(FakeClock, AnUnmetWaitEndsAtItsDeadlineAtOnce) {
  FakeClock clock;
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(mu);
  auto real_start = std::chrono::steady_clock::now();
  EXPECT_FALSE(clock.WaitUntil(cv, lock, clock.Now() + seconds(3600), [] { return false; }));
  EXPECT_EQ(clock.Elapsed(), seconds(3600));
  EXPECT_LT(std::chrono::steady_clock::now() - real_start, seconds(5)) << "it waited for real";
  EXPECT_TRUE(clock.WaitUntil(cv, lock, clock.Now() + seconds(10), [] { return true; }));
  EXPECT_EQ(clock.Elapsed(), seconds(3600)) << "a met wait takes no time";
}

TEST(FakeClock, TheWallClockStartsAtAFixedDateAndFollows) {
  FakeClock clock;
  EXPECT_EQ(Iso8601Utc(clock.WallNow()), "2027-01-01T00:00:00Z");
  clock.Advance(std::chrono::hours(25) + seconds(1));
  EXPECT_EQ(Iso8601Utc(clock.WallNow()), "2027-01-02T01:00:01Z");
}

TEST(FakeClock, ThreadsShareOneTime) {
  FakeClock clock;
  std::thread sleeper([&] { clock.SleepFor(seconds(7)); });
  sleeper.join();
  EXPECT_EQ(clock.Elapsed(), seconds(7));
}

}  // namespace
}  // namespace cc
