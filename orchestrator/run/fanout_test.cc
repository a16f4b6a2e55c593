#include "orchestrator/run/fanout.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace cc {
namespace {

TEST(SlidingWindow, RunsEveryItemExactlyOnce) {
  std::mutex mu;
  std::multiset<size_t> seen;
  SlidingWindow(100, 7, [&](size_t i) {
    std::lock_guard<std::mutex> l(mu);
    seen.insert(i);
  });
  ASSERT_EQ(seen.size(), 100u);
  for (size_t i = 0; i < 100; ++i) EXPECT_EQ(seen.count(i), 1u);
}

TEST(SlidingWindow, NeverHasMoreThanTheWindowInFlight) {
  std::atomic<int> in_flight{0}, peak{0};
  SlidingWindow(40, 4, [&](size_t) {
    int now = ++in_flight;
    int p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    --in_flight;
  });
  EXPECT_LE(peak.load(), 4);
  EXPECT_GE(peak.load(), 2);  // it really ran in parallel
}

TEST(SlidingWindow, ASlowItemDoesNotHoldBackTheOthers) {
  // Item 0 stays in flight until the other 20 are done: with a window of 2
  // they must flow through the second slot, not wait for a batch to end.
  // (Batches would keep item 0 waiting for them until its 10 s limit.)
  std::mutex mu;
  std::condition_variable cv;
  int others_done = 0;
  bool saw_all = false;
  SlidingWindow(21, 2, [&](size_t i) {
    std::unique_lock<std::mutex> l(mu);
    if (i != 0) {
      ++others_done;
      cv.notify_all();
      return;
    }
    saw_all = cv.wait_for(l, std::chrono::seconds(10), [&] { return others_done == 20; });
  });
  EXPECT_TRUE(saw_all) << "only " << others_done << " of 20 ran beside the slow item";
}

}  // namespace
}  // namespace cc
