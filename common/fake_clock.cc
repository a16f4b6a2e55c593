#include "common/fake_clock.h"

namespace cc {

Clock::time_point FakeClock::Now() {
  std::lock_guard<std::mutex> l(mu_);
  return now_;
}

std::chrono::system_clock::time_point FakeClock::WallNow() {
  std::lock_guard<std::mutex> l(mu_);
  return std::chrono::system_clock::time_point(std::chrono::seconds(kStartWallSeconds)) +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(now_ - start_);
}

void FakeClock::SleepUntil(time_point t) { JumpTo(t); }

bool FakeClock::WaitUntil(std::condition_variable&, std::unique_lock<std::mutex>&, time_point t,
                          const std::function<bool()>& ready) {
  if (ready()) return true;
  // The caller holds its lock, so nothing it waits for can change while
  // the time passes: the wait ends at its deadline, unmet.
  JumpTo(t);
  return false;
}

void FakeClock::Advance(duration d) {
  std::lock_guard<std::mutex> l(mu_);
  now_ += d;
}

Clock::duration FakeClock::Elapsed() {
  std::lock_guard<std::mutex> l(mu_);
  return now_ - start_;
}

void FakeClock::JumpTo(time_point t) {
  std::lock_guard<std::mutex> l(mu_);
  if (t > now_) now_ = t;
}

}  // namespace cc
