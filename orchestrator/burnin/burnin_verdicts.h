// How a burn-in judges its rounds (pure; thread-safe). A burn-in never
// accuses on one round: a pair is judged by its failure rate over every
// round it met in, a node by its pairs over time, a counter by how it
// moves, a GPU by its clocks and slowdown reasons across the samples.
//
//   - A pair that never failed passes. One that failed in some rounds is
//     `flaky`, with its rate and round numbers: a warning at or under
//     [burnin] max_failure_rate, a failure above it. One that failed in
//     every round it met in is a `bad-link` failure.
//   - A node is the cause (`bad-node`) when, for one stage and check, it
//     failed with at least two different peers, with every peer it met
//     from its first failing round to its last, while each of those peers
//     passed with the other nodes it met then (burnin_cause.h). The
//     verdict names the check, the node's rate over its rounds and the
//     failing rounds; its pairs are counted in it, not named one by one.
//     It fails when the node still failed at the end or its rate is above
//     max_failure_rate, and warns when it recovered within that rate.
//   - The next step follows what failed alongside: one port failing while
//     the other ports of the same pairs passed in the same rounds is a
//     firewall rule (on the node, or on one end of the pair); every port
//     failing at once is the link or cable.
//   - The same for bandwidth: a node whose pairs with every peer (at least
//     two) lose over 20% of their busbw from the burn-in's earlier half to
//     its later one, while its peers keep theirs with others, is named
//     (`bad-node`, a warning: nothing failed yet).
//   - A counter that rose in at least two of the intervals between rounds
//     is named with its delta per hour (`unhealthy`, a warning).
//   - A GPU whose SM clock, while busy, falls below 85% of its early level
//     and stays there, or that reports a thermal slowdown, is named with
//     the round it began (`unhealthy`, a warning).
#pragma once

#include <vector>

#include "orchestrator/burnin/burnin_summary.h"
#include "orchestrator/store/verdict.h"

namespace cc {

// Sets p.outcome from its rate: pass, warn (flaky within max_failure_rate),
// fail (flaky above it, or failed in every round), skip (never attempted).
void JudgePairRate(PairRate& p, double max_failure_rate);

// Judges every pair of `s` (JudgePairRate) and returns the verdicts, each
// with evidence "burnin": true so a resume can drop and judge them anew.
std::vector<Verdict> BurnInVerdicts(BurnInSummary& s);

// kExitFailed when any verdict fails, else kExitOk.
int BurnInExitCode(const std::vector<Verdict>& verdicts);

}  // namespace cc
