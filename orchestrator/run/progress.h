// Progress of a run for people: per stage, done/total, elapsed and ETA.
// On a TTY one line redrawn in place; otherwise plain lines, now and then.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

#include "common/clock.h"

namespace cc {

class Progress {
 public:
  // out == nullptr: silent (tests, --json). Elapsed times and redraws are
  // on `clock`, the run's (FleetOptions::clock). REQUIRES: `clock` outlives
  // the Progress.
  Progress(std::FILE* out, bool tty, Clock& clock = RealClock())
      : out_(out), tty_(tty), clock_(clock) {}
  void StartStage(const std::string& stage, long long total, const std::string& unit);
  void Advance(long long n = 1);
  void FinishStage();
  // A line for people, above the progress line.
  void Note(const std::string& line);

 private:
  void Draw(bool force);
  std::FILE* out_;
  bool tty_;
  Clock& clock_;
  std::mutex mu_;
  std::string stage_, unit_;
  long long total_ = 0, done_ = 0;
  Clock::time_point start_, last_draw_;
  bool drawn_ = false;
};

}  // namespace cc
