// Everything stored about one run, loaded from the store. Reports render
// from this alone, so any past run can be re-rendered.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "orchestrator/store/store.h"
#include "orchestrator/store/verdict.h"

namespace cc {

struct RunData {
  RunRecord run;
  std::vector<NodeRecord> nodes;
  std::vector<NodeResult> node_results;
  std::vector<PairResult> pair_results;
  // The stages' own verdicts (StageContext::Record), in the order recorded.
  std::vector<Verdict> verdicts;
  // Node names in inventory order (from run.meta "nodes", else from nodes).
  std::vector<std::string> NodeNames() const;
};

Result<RunData> LoadRunData(Store& store, int64_t run_id);

// Counts of outcomes over node and pair results (verdicts are not checks).
struct OutcomeCounts {
  int pass = 0, warn = 0, fail = 0, hang = 0, skip = 0, error = 0;
  void Add(Outcome o);
  int bad() const { return fail + hang; }
  std::string ToString() const;  // "12 pass, 1 fail" (zeros left out)
};
OutcomeCounts CountOutcomes(const RunData& data);

nlohmann::json RunDataToJson(const RunData& data);

}  // namespace cc
