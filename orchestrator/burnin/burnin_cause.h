// What a burn-in's failing rounds point at: a node, or the pair itself,
// and how much of the pair's stage failed with them. Pure; thread-safe.
//
// In a round each node meets one peer, so a node that lost a port for an
// hour shows as one flaky pair per round of that hour, each with a
// different peer. Those pairs are one cause on the node when, for one
// stage and check:
//   - the node failed with at least two different peers;
//   - its failures span a window of rounds (first to last failing round)
//     in which it failed with every peer it met: no round of the window
//     passed;
//   - each of those peers passed with every other node it met in the
//     window, and met at least one there (its alibi).
// The window may run to the node's last round (it still fails: the trend
// of a node that broke during the burn-in) or close before it (a firewall
// rule that came and went). Checks of one stage that fail alike on the
// same node in the same window are one cause.
//
// A pair's failure scope compares, for each failed round of each failing
// check, the stage's other checks of the same pair in the same round: one
// port failing while the others pass is a filter on that port, every port
// failing is the link.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/burnin/burnin_summary.h"

namespace cc {

// What the stage's other checks of the same pairs did in the rounds the
// failing checks failed.
enum class FailureScope {
  kAlone,       // the stage ran no other check on those pairs then
  kOnlyThese,   // the others passed: only the failing checks failed
  kEveryCheck,  // every check the stage ran on those pairs then failed
  kMixed,       // some of the others failed too, not all
};

// The scope of `failing` (pair checks of one stage that failed, any
// pairs) within `s`. Each element must point into s.pairs.
FailureScope ScopeOf(const BurnInSummary& s, const std::vector<const PairRate*>& failing);

// One node that explains the failures of its pairs (the rule above).
struct NodeCause {
  std::string node;
  std::string stage;
  std::vector<std::string> checks;  // in the order of s.pairs
  int first_round = 0;              // the window: first and last failing round
  int last_round = 0;
  std::vector<int> failed_rounds;  // the node's failing rounds, ascending
  int rounds_tested = 0;           // rounds the node was tested in on those checks
  bool to_the_end = false;         // it still failed in the last round it was tested
  std::vector<std::string> peers;  // every peer it failed with, inventory order
  // The pair checks it explains (each failed): one per check and peer,
  // pointing into the summary it was found in.
  std::vector<const PairRate*> pairs;
  FailureScope scope = FailureScope::kAlone;

  // failed_rounds / rounds_tested.
  double rate() const;
};

// Every node cause of `s`, in the order of the stages and checks of
// s.pairs, then inventory order. A pair check is explained by at most one
// cause.
std::vector<NodeCause> NodeCauses(const BurnInSummary& s);

}  // namespace cc
