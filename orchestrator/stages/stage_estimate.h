// The vocabulary of a stage's --dry-run estimate (StageSpec::estimate):
// what every estimate starts from, what it returns, and the phrases the
// plan is written in. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include "orchestrator/inventory/inventory.h"

namespace cc {

// The cluster as the plan sees it (plan.cc fills it in).
struct PlanInput {
  const Inventory& inventory;
  size_t nodes = 0;
  size_t waves = 0;      // windows of `fanout` nodes worked on at once
  size_t fanout = 0;     // nodes in flight
  size_t pairs = 0;      // unordered node pairs
  size_t rounds = 0;     // rounds of disjoint pairs (schedule.h RoundRobinRounds)
  size_t per_round = 0;  // pairs in a full round
};

struct StageEstimate {
  std::string work;    // "120 pairs in 15 rounds of 8"
  double seconds = 0;  // rough, when nothing times out
};

// "1 node", "16 nodes".
std::string Plural(size_t n, const char* one, const char* many);
// "120 pairs in 15 rounds of 8".
std::string RoundsPhrase(const PlanInput& in);
// "45 s", "2.5 min", "1.2 h".
std::string FormatDuration(double seconds);

}  // namespace cc
