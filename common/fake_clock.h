// A clock for tests: time moves only when the test advances it, or when
// the code under test would wait for it. A sleep jumps to its end at once;
// a wait whose condition is not met jumps to its deadline at once, because
// in a world of fakes (FakeTransport, a scripted process) nothing arrives
// while everyone waits. So a 20 s hello timeout is judged in microseconds,
// and the durations the code measures are exact.
//
// Use it only with fakes, and not for a wait on another thread's work (a
// rendezvous): that wait would end at once, unmet. The real transports
// wait in real time (poll, libssh) and would spin on a deadline whose time
// never moves.
//
//   FakeClock clock;
//   Deadline d = Deadline::InSeconds(clock, 20);
//   process.ReadLine(d);   // a silent fake: kTimeout, and clock.Elapsed() == 20 s
//
// Threading: thread-safe. Threads share one time: when one jumps, the
// others see the later time too.
#pragma once

#include <mutex>

#include "common/clock.h"

namespace cc {

class FakeClock : public Clock {
 public:
  // The wall clock starts here (UTC seconds since 1970); the steady clock at
  // an arbitrary point, as a real one does.
  static constexpr long long kStartWallSeconds = 1798761600;  // 2027-01-01T00:00:00Z

  time_point Now() override;
  std::chrono::system_clock::time_point WallNow() override;
  void SleepUntil(time_point t) override;
  bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, time_point t,
                 const std::function<bool()>& ready) override;

  void Advance(duration d);
  // Time passed since the clock was made.
  duration Elapsed();

 private:
  // Moves the time to `t` unless it is already later.
  void JumpTo(time_point t);

  std::mutex mu_;
  const time_point start_ = time_point(std::chrono::hours(1));
  time_point now_ = start_;
};

}  // namespace cc
