// `clustercheck run --dry-run`: the plan of a run without touching a node:
// its stages in order, how many nodes and pairs each covers, the rounds of
// the pair stages (schedule.h RoundRobinRounds) and a rough time for each,
// as each stage estimates itself from its own settings (StageSpec::estimate).
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/inventory/inventory.h"
#include "orchestrator/stages/stage_estimate.h"

namespace cc {

struct PlanOptions {
  int fanout = 0;  // nodes in flight; 0 = the inventory's ssh.fanout
};

struct StagePlan {
  std::string stage;
  std::string work;       // "120 pairs in 15 rounds of 8"
  double estimate_s = 0;  // rough, when nothing times out
};

// The cluster as every stage's estimate sees it: nodes, connect waves,
// pairs and rounds. Refers to `inventory`, which must outlive it.
PlanInput PlanInputOf(const Inventory& inventory, const PlanOptions& options = {});

// One entry per stage, "connect" first (it always runs). Unknown stage
// names get an entry with work "unknown stage"; the others are what the
// stage's StageSpec::estimate says.
std::vector<StagePlan> PlanStages(const Inventory& inventory,
                                  const std::vector<std::string>& stages,
                                  const PlanOptions& options = {});

// The plan as a table for people, with a total.
std::string DescribePlan(const Inventory& inventory, const std::vector<std::string>& stages,
                         const PlanOptions& options = {});

}  // namespace cc
