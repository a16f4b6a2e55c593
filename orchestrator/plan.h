// `clustercheck run --dry-run`: the plan of a run without touching a node:
// its stages in order, how many nodes and pairs each covers, the rounds of
// the pair stages (schedule.h RoundRobinRounds) and a rough time for each.
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/inventory/inventory.h"

namespace cc {

struct PlanOptions {
  int fanout = 0;  // nodes in flight; 0 = the inventory's ssh.fanout
};

struct StagePlan {
  std::string stage;
  std::string work;       // "120 pairs in 15 rounds of 8"
  double estimate_s = 0;  // rough, when nothing times out
};

// One entry per stage, "connect" first (it always runs). Unknown stage
// names get an entry with work "unknown stage".
std::vector<StagePlan> PlanStages(const Inventory& inventory,
                                  const std::vector<std::string>& stages,
                                  const PlanOptions& options = {});

// The plan as a table for people, with a total.
std::string DescribePlan(const Inventory& inventory, const std::vector<std::string>& stages,
                         const PlanOptions& options = {});

// "45 s", "2.5 min", "1.2 h".
std::string FormatDuration(double seconds);

}  // namespace cc
