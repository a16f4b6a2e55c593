// Everything stored about one run, loaded from the store. Reports render
// from this alone, so any past run can be re-rendered.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "orchestrator/store/store.h"

namespace cc {

struct RunData {
  RunRecord run;
  std::vector<NodeRecord> nodes;
  std::vector<NodeResult> node_results;
  std::vector<PairResult> pair_results;
  // Node names in inventory order (from run.meta "nodes", else from nodes).
  std::vector<std::string> NodeNames() const;
};

Result<RunData> LoadRunData(Store& store, int64_t run_id);

// A stage's own attribution stored as a node result: check
// "verdict:<kind>", node a hostlist or "*", evidence with "nodes",
// "node_pairs" and "next_step" (the ports stage writes these). They are
// verdicts, not node checks: counts, node lists and JUnit leave them out.
bool IsStageVerdict(const NodeResult& r);

// Counts of outcomes over node and pair results (stage verdicts left out).
struct OutcomeCounts {
  int pass = 0, warn = 0, fail = 0, hang = 0, skip = 0, error = 0;
  void Add(Outcome o);
  int bad() const { return fail + hang; }
  std::string ToString() const;  // "12 pass, 1 fail" (zeros left out)
};
OutcomeCounts CountOutcomes(const RunData& data);

nlohmann::json RunDataToJson(const RunData& data);

}  // namespace cc
