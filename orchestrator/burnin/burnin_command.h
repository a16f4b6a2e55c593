// `clustercheck burnin INVENTORY --for 2h | --rounds N [--resume RUN]`:
// facts, parity, health and nics once (nics for its choice of network),
// then the pair stages the inventory enables (nics, ports, nccl, mpi)
// round after round, each round on the next circle-method pairing
// (burnin_plan.h) and only its pairs, a health sample of
// every node after each round, all in one stored run with a round number.
// Judged by rate at the end (burnin_verdicts.h).
//
// A round is never cut for time; Ctrl-C stops the current round, which is
// then dropped (not half-counted), writes the report of the rounds done
// and exits 130. --resume RUN runs facts, parity and health again and
// continues after the last round stored whole.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "orchestrator/burnin/burnin_summary.h"
#include "orchestrator/run_command.h"
#include "orchestrator/store/store.h"

namespace cc {

struct BurnInOptions {
  RunOptions run;  // inventory, db, --set, --limit, --fanout, --agent, output
  std::optional<double> for_s;
  std::optional<int> rounds;
  int64_t resume = 0;
};

int RunBurnIn(BurnInOptions options);

// The figures of a stored burn-in (run meta "burnin"), its pair outcomes
// judged; nullopt for a run that was not one.
std::optional<BurnInSummary> StoredBurnIn(Store& store, const RunRecord& run,
                                          const std::vector<std::string>& nodes);

// "2h", "90m", "45s", "1h30m", "600" (seconds). kBadArgument otherwise.
Result<double> ParseBurnInDuration(const std::string& text);

// The stages looped every round, of `stages` (in run order).
std::vector<std::string> BurnInLoopStages(const std::vector<std::string>& stages);

}  // namespace cc
