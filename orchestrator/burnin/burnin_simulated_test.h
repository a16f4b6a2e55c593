// A burn-in made up from a rule, for the verdict and cause tests: which
// pair checks failed in which rounds of the circle method. Defined in
// burnin_simulated_test.cc, so only the test binary has it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "orchestrator/burnin/burnin_summary.h"

namespace cc::testdata {

// Says whether `check` of pair a-b (a before b) failed in `round`.
using FailsRule = std::function<bool(const std::string& check, const std::string& a,
                                     const std::string& b, int round)>;

// `check` ("" for every check) of every pair with `node` fails in rounds
// first to last.
FailsRule NodeFails(const std::string& node, int first, int last, const std::string& check = "");

// `check` ("" for every check) of pair a-b fails in rounds first to last.
FailsRule PairFails(const std::string& a, const std::string& b, int first, int last,
                    const std::string& check = "");

// Fails where any of `rules` fails.
FailsRule AnyOf(std::vector<FailsRule> rules);

// Nodes n1..n<nodes>, `rounds` rounds (BurnInRoundPairs), every pair of a
// round tested on each of `checks` of the ports stage; rates set,
// outcomes left to the verdicts.
BurnInSummary SimulatedBurnIn(int nodes, int rounds, const std::vector<std::string>& checks,
                              const FailsRule& fails);

// The peer `node` meets in `round` of `nodes` nodes; "" when it sits out.
std::string PeerInRound(int nodes, const std::string& node, int round);

}  // namespace cc::testdata
