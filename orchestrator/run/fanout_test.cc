#include "orchestrator/run/fanout.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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
  // One item takes 300 ms; with a window of 2 the other 20 (10 ms each)
  // flow through the second slot instead of waiting for a batch to end.
  auto start = std::chrono::steady_clock::now();
  std::atomic<long long> last_fast_done_ms{0};
  SlidingWindow(21, 2, [&](size_t i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(i == 0 ? 300 : 10));
    if (i != 0) {
      last_fast_done_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
    }
  });
  EXPECT_LT(last_fast_done_ms.load(), 290);
}

}  // namespace
}  // namespace cc
