#include "orchestrator/run/progress.h"

namespace cc {

void Progress::StartStage(const std::string& stage, long long total, const std::string& unit) {
  std::lock_guard<std::mutex> l(mu_);
  stage_ = stage;
  unit_ = unit;
  total_ = total;
  done_ = 0;
  start_ = clock_.Now();
  drawn_ = false;
  Draw(true);
}

void Progress::Advance(long long n) {
  std::lock_guard<std::mutex> l(mu_);
  done_ += n;
  Draw(done_ >= total_);
}

void Progress::FinishStage() {
  std::lock_guard<std::mutex> l(mu_);
  if (!out_) return;
  double s = std::chrono::duration<double>(clock_.Now() - start_).count();
  if (tty_) std::fputs("\r\033[K", out_);
  std::fprintf(out_, "  %-8s %lld/%lld %s in %.1fs\n", stage_.c_str(), done_, total_, unit_.c_str(),
               s);
  std::fflush(out_);
}

void Progress::Note(const std::string& line) {
  std::lock_guard<std::mutex> l(mu_);
  if (!out_) return;
  if (tty_) std::fputs("\r\033[K", out_);
  std::fprintf(out_, "%s\n", line.c_str());
  if (tty_) Draw(true);
  std::fflush(out_);
}

void Progress::Draw(bool force) {
  if (!out_) return;
  const Clock::time_point now = clock_.Now();
  // Plain lines every 5 s at most, so logs stay short; a TTY every 100 ms.
  auto every = tty_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000);
  if (!tty_ && (force || done_ == 0)) return;  // the summary line says it
  if (!force && drawn_ && now - last_draw_ < every) return;
  last_draw_ = now;
  drawn_ = true;
  double el = std::chrono::duration<double>(now - start_).count();
  double eta = done_ > 0 && total_ > done_ ? el / done_ * (total_ - done_) : 0;
  if (tty_) {
    std::fprintf(out_, "\r\033[K  %-8s %lld/%lld %s  %.1fs  eta %.0fs", stage_.c_str(), done_,
                 total_, unit_.c_str(), el, eta);
  } else {
    std::fprintf(out_, "  %-8s %lld/%lld %s  %.1fs  eta %.0fs\n", stage_.c_str(), done_, total_,
                 unit_.c_str(), el, eta);
  }
  std::fflush(out_);
}

}  // namespace cc
