// One finding of the health stage: what is wrong (or fine) with one part
// of one node, and what to do about it. Pure data; the judges
// (node_health.h, cluster_health.h, counter_deltas.h) make them and the
// stage stores each as a node result of check `check`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "orchestrator/stages/health/health_action.h"

namespace cc {

struct HealthFinding {
  // "gpu3.pcie", "xid.79", "ib.mlx5_0/1.state", "gpu", "kernel_log", ...
  std::string check;
  Outcome outcome = Outcome::kPass;
  HealthAction action = HealthAction::kOk;
  std::string value;     // what the node has ("gen 5 x8")
  std::string expected;  // what it should have ("gen 5 x16"), "" when none
  std::string message;   // one line, naming the part ("GPU 3 (0000:5d:00.0) ...")
  nlohmann::json evidence = nlohmann::json::object();
};

// A finding whose outcome follows its action (ok passes, investigate
// warns, the rest fail).
HealthFinding Finding(std::string check, HealthAction action, std::string message,
                      std::string value = "", std::string expected = "");

// A finding that could not be judged: `skip` (nothing there to check) or
// `error` (the reading failed), with the reason.
HealthFinding NotJudged(std::string check, Outcome outcome, std::string reason);

// The worst action among the findings that did not pass or skip.
HealthAction WorstAction(const std::vector<HealthFinding>& findings);

}  // namespace cc
