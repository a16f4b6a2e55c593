#include "orchestrator/stages/stage_estimate.h"

#include <cstdio>

namespace cc {

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string RoundsPhrase(const PlanInput& in) {
  return Plural(in.pairs, "pair", "pairs") + " in " + Plural(in.rounds, "round", "rounds") +
         " of " + std::to_string(in.per_round);
}

std::string FormatDuration(double s) {
  char buf[32];
  if (s < 1) return "<1 s";
  if (s < 90) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else if (s < 90 * 60) {
    std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  }
  return buf;
}

}  // namespace cc
