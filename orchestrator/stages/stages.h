// The table of stages (stage_spec.h), in run order, and the questions the
// rest of the controller asks of it. Each row lives in its stage's folder.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "orchestrator/stages/stage_spec.h"

namespace cc {

// In run order: facts, parity, health, nics, ports, nccl, mpi, then diagnostic
// stages (sleep) that run only when asked for.
const std::vector<const StageSpec*>& StageSpecs();
// nullptr for a name that is no stage ("connect", a typo).
const StageSpec* FindStageSpec(const std::string& name);
// The stages `run` uses when neither --stages nor [stages].run says.
std::vector<std::string> DefaultStageNames();

// Whether the pair checks of `stage` are directed (StageSpec); false for
// a name that is no stage.
bool PairsDirected(const std::string& stage);

// The matrix a pair result belongs to: its check, unless its stage says
// otherwise (the ports stage's ephemeral samples, a different random port
// per receiver, share one "tcp/ephemeral").
std::string MatrixCheck(const PairResult& r);

// Every (stage, matrix check) of a run's pair results, in the order first
// stored: RunData::pair_check_order, then any it lacks from pair_results
// and routine_pairs, in their order.
std::vector<std::pair<std::string, std::string>> PairChecks(const RunData& d);

// A run's pair results by (stage, matrix check), for whoever goes through
// them one check at a time (a check of 256 nodes has 65,280 pairs).
struct PairsByCheck {
  explicit PairsByCheck(const RunData& d);
  std::vector<std::pair<std::string, std::string>> checks;  // PairChecks
  std::vector<std::vector<const PairResult*>> full;         // by check: its pair_results
  std::vector<size_t> check_of_group;                       // a routine_pairs group's check

  // Calls each(src, dst, outcome, state, value, unit) for every result of
  // check i: its full results, then its routine ones.
  template <typename F>
  void ForEachResult(size_t i, const RoutinePairs& routine, F&& each) const {
    for (const PairResult* r : full[i])
      each(r->src, r->dst, r->outcome, r->state, r->value, r->unit);
    for (const RoutinePairs::Entry& e : routine.entries()) {
      if (check_of_group[e.group] != i) continue;
      const RoutinePairs::Group& g = routine.group(e);
      each(routine.node(e.src), routine.node(e.dst), g.outcome, g.state, routine.value(e), g.unit);
    }
  }
};

}  // namespace cc
