#include "orchestrator/burnin/burnin_text.h"

#include <cmath>
#include <string>
#include <vector>

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
  // Runs of three or more consecutive rounds read as one range.
  std::vector<std::string> pieces;
  for (size_t i = 0; i < rounds.size();) {
    size_t j = i;
    while (j + 1 < rounds.size() && rounds[j + 1] == rounds[j] + 1) ++j;
    if (j - i >= 2) {
      pieces.push_back(std::to_string(rounds[i]) + "-" + std::to_string(rounds[j]));
    } else {
      for (size_t k = i; k <= j; ++k) pieces.push_back(std::to_string(rounds[k]));
    }
    i = j + 1;
  }
  std::string s = rounds.size() == 1 ? "round " : "rounds ";
  // Keep the first ones (where it started) and the last (that it goes on).
  bool cut = max_shown >= 2 && pieces.size() > max_shown;
  size_t head = cut ? max_shown - 1 : pieces.size();
  for (size_t i = 0; i < head; ++i) s += (i ? ", " : "") + pieces[i];
  if (cut) {
    s += ", \xE2\x80\xA6, " + pieces.back() + " (" + std::to_string(rounds.size()) + " in all)";
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
