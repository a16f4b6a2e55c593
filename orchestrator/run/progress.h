// Progress of a run for people: per stage, done/total, elapsed and ETA.
// On a TTY one line redrawn in place; otherwise plain lines, now and then.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

namespace cc {

class Progress {
 public:
  // out == nullptr: silent (tests, --json).
  Progress(std::FILE* out, bool tty) : out_(out), tty_(tty) {}
  void StartStage(const std::string& stage, long long total, const std::string& unit);
  void Advance(long long n = 1);
  void FinishStage();
  // A line for people, above the progress line.
  void Note(const std::string& line);

 private:
  void Draw(bool force);
  std::FILE* out_;
  bool tty_;
  std::mutex mu_;
  std::string stage_, unit_;
  long long total_ = 0, done_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drawn_ = false;
};

}  // namespace cc
