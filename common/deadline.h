// A point in time by which a step must finish. Every remote step has one.
#pragma once

#include <chrono>

namespace cc {

using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

class Deadline {
 public:
  static Deadline In(Millis d) { return Deadline(Clock::now() + d); }
  static Deadline InSeconds(double s) { return In(Millis(static_cast<long long>(s * 1000))); }
  static Deadline At(Clock::time_point t) { return Deadline(t); }
  Clock::time_point at() const { return at_; }
  bool Passed() const { return Clock::now() >= at_; }
  // Milliseconds left, never negative.
  long long RemainingMs() const {
    auto r = std::chrono::duration_cast<Millis>(at_ - Clock::now()).count();
    return r < 0 ? 0 : r;
  }
  // The earlier of the two.
  Deadline Min(Deadline o) const { return o.at_ < at_ ? o : *this; }

 private:
  explicit Deadline(Clock::time_point at) : at_(at) {}
  Clock::time_point at_;
};

}  // namespace cc
