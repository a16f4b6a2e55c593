#include "common/clock.h"

#include <ctime>
#include <thread>

namespace cc {
namespace {

class SystemClocks : public Clock {
 public:
  time_point Now() override { return std::chrono::steady_clock::now(); }
  std::chrono::system_clock::time_point WallNow() override {
    return std::chrono::system_clock::now();
  }
  void SleepUntil(time_point t) override { std::this_thread::sleep_until(t); }
  bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, time_point t,
                 const std::function<bool()>& ready) override {
    return cv.wait_until(lock, t, ready);
  }
};

}  // namespace

Clock& RealClock() {
  // Leaked on purpose: detached threads may still ask it for the time while
  // statics are torn down at exit.
  static Clock* clock = new SystemClocks();
  return *clock;
}

std::string Iso8601Utc(std::chrono::system_clock::time_point t) {
  std::time_t s = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace cc
