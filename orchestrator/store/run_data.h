// Everything stored about one run, loaded from the store. Reports render
// from this alone, so any past run can be re-rendered.
#pragma once

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "orchestrator/store/routine_pairs.h"
#include "orchestrator/store/store.h"
#include "orchestrator/store/verdict.h"

namespace cc {

struct RunData {
  RunRecord run;
  std::vector<NodeRecord> nodes;
  std::vector<NodeResult> node_results;
  // Pair results in full. LoadRunData puts the routine ones into
  // routine_pairs instead; anything else (a test's RunData) may hold
  // results of any kind here.
  std::vector<PairResult> pair_results;
  RoutinePairs routine_pairs;
  // (stage, matrix check) of the pair results in the order first stored,
  // filled by LoadRunData (stages.h PairChecks reads it).
  std::vector<std::pair<std::string, std::string>> pair_check_order;
  // The stages' own verdicts (StageContext::Record), in the order recorded.
  std::vector<Verdict> verdicts;
  // Node names in inventory order (from run.meta "nodes", else from nodes).
  std::vector<std::string> NodeNames() const;

  // Calls each(const PairResult&) for every pair result: pair_results,
  // then the routine ones, each materialized for the call only (no
  // message, no evidence: RoutinePairs::Materialize).
  template <typename F>
  void ForEachPairResult(F&& each) const {
    for (const PairResult& r : pair_results) each(r);
    for (const RoutinePairs::Entry& e : routine_pairs.entries()) {
      each(static_cast<const PairResult&>(routine_pairs.Materialize(e)));
    }
  }
  size_t PairResultCount() const { return pair_results.size() + routine_pairs.size(); }
};

// What a pair result's matrix is (stages.h MatrixCheck), for the routine
// results, whose evidence is not kept.
using MatrixCheckFn = std::string (*)(const PairResult&);

// The run with its results; pair results are read one at a time, the
// routine ones kept in routine_pairs.
Result<RunData> LoadRunData(Store& store, int64_t run_id, MatrixCheckFn matrix_check);

// Counts of outcomes over node and pair results (verdicts are not checks).
struct OutcomeCounts {
  int pass = 0, warn = 0, fail = 0, hang = 0, skip = 0, error = 0;
  void Add(Outcome o);
  int bad() const { return fail + hang; }
  std::string ToString() const;  // "12 pass, 1 fail" (zeros left out)
};
OutcomeCounts CountOutcomes(const RunData& data);

// The run as JSON; its "pair_results" (ForEachPairResult: the routine ones
// without message and evidence) only with `pair_results`.
nlohmann::json RunDataToJson(const RunData& data, bool pair_results = true);
nlohmann::json PairResultToJson(const PairResult& r);

}  // namespace cc
