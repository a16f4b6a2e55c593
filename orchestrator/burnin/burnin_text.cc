#include "orchestrator/burnin/burnin_text.h"

#include <cmath>

namespace cc {

std::string PercentText(double rate) {
  if (!(rate > 0)) return "0%";  // NaN too: no attempt is no failure seen
  if (rate >= 1) return "100%";
  long p = std::lround(rate * 100);
  if (p == 0) return "<1%";
  if (p == 100) return ">99%";
  return std::to_string(p) + "%";
}

std::string RoundsText(const std::vector<int>& rounds, size_t max_shown) {
  if (rounds.empty()) return "";
  std::string s = rounds.size() == 1 ? "round " : "rounds ";
  // Keep the first ones (where it started) and the last (that it goes on).
  bool cut = max_shown >= 2 && rounds.size() > max_shown;
  size_t head = cut ? max_shown - 1 : rounds.size();
  for (size_t i = 0; i < head; ++i) s += (i ? ", " : "") + std::to_string(rounds[i]);
  if (cut) {
    s += ", \xE2\x80\xA6, " + std::to_string(rounds.back()) + " (" + std::to_string(rounds.size()) +
         " in all)";
  }
  return s;
}

std::string DurationText(double seconds) {
  long s = std::isfinite(seconds) && seconds > 0 ? std::lround(seconds) : 0;
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m " + std::to_string(s % 60) + "s";
  return std::to_string(s / 3600) + "h " + std::to_string(s % 3600 / 60) + "m";
}

}  // namespace cc
