// Where the controller's time comes from: a steady clock for deadlines and
// durations, a wall clock for timestamps, and the two ways to let time pass
// (sleep, wait on a condition). The real one reads the machine's clocks;
// tests give a FakeClock (common/fake_clock.h) so that a timeout costs no
// real time (leveldb's Env, ninja's DiskInterface: the outside world behind
// a small interface). A Deadline (deadline.h) carries the clock it is judged
// by, so code that is handed a deadline needs no clock of its own.
//
// Threading: every call may come from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

namespace cc {

class Clock {
 public:
  // Steady time: only differences mean anything.
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;

  virtual ~Clock() = default;

  virtual time_point Now() = 0;
  // Calendar time, for timestamps that people read and runs are ordered by.
  virtual std::chrono::system_clock::time_point WallNow() = 0;
  // Returns at `t` (at once when it has passed).
  virtual void SleepUntil(time_point t) = 0;
  // Waits on `cv` (with `lock` held, as std::condition_variable::wait_until)
  // until `ready()` or `t`; returns ready(). Spurious wakeups are handled.
  virtual bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         time_point t, const std::function<bool()>& ready) = 0;

  void SleepFor(duration d) { SleepUntil(Now() + d); }
};

// The machine's clocks (steady_clock, system_clock). Never destroyed.
Clock& RealClock();

// "2026-12-02T15:32:23Z": UTC, whole seconds, as the store keeps times.
std::string Iso8601Utc(std::chrono::system_clock::time_point t);

}  // namespace cc
