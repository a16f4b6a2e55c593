// A point in time by which a step must finish. Every remote step has one.
// A deadline carries the clock it is judged by (clock.h): the real one
// unless a test made it on a FakeClock, so whoever is handed a deadline
// waits and measures on the caller's clock without knowing which it is.
#pragma once

#include <chrono>

#include "common/clock.h"

namespace cc {

using Millis = std::chrono::milliseconds;

class Deadline {
 public:
  // On the real clock.
  static Deadline In(Millis d) { return In(RealClock(), d); }
  static Deadline InSeconds(double s) { return InSeconds(RealClock(), s); }
  // On `clock`. REQUIRES: `clock` outlives the deadline.
  static Deadline In(Clock& clock, Millis d) { return Deadline(clock, clock.Now() + d); }
  static Deadline InSeconds(Clock& clock, double s) {
    return In(clock, Millis(static_cast<long long>(s * 1000)));
  }
  static Deadline At(Clock& clock, Clock::time_point t) { return Deadline(clock, t); }

  Clock& clock() const { return *clock_; }
  Clock::time_point at() const { return at_; }
  bool Passed() const { return clock_->Now() >= at_; }
  // Milliseconds left, never negative.
  long long RemainingMs() const {
    auto r = std::chrono::duration_cast<Millis>(at_ - clock_->Now()).count();
    return r < 0 ? 0 : r;
  }
  // The earlier of the two. REQUIRES: both on the same clock.
  Deadline Min(Deadline o) const { return o.at_ < at_ ? o : *this; }
  // The earlier of this one and `d` from now: a slice of a longer wait.
  Deadline Within(Millis d) const { return Min(In(*clock_, d)); }
  // This one moved `d` later (e.g. by a slow login shell's startup time).
  Deadline Extended(Clock::duration d) const { return Deadline(*clock_, at_ + d); }

 private:
  Deadline(Clock& clock, Clock::time_point at) : clock_(&clock), at_(at) {}
  Clock* clock_;
  Clock::time_point at_;
};

}  // namespace cc
