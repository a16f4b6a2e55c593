// Confirmation of the nics stage's probes (confirm.h, issue 17), pure. The
// first attempt probes every address in a burst; every probe whose result
// fails or hangs is probed again, quietly (QuietRounds: one pair per node
// at a time) and with a longer deadline, and the selection is judged on
// each probe's latest attempt, so that one lost connect under load does not
// accuse a node or move the choice of network. The stored results are the
// first attempts merged with their retests by Confirm().
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/run/confirm.h"
#include "orchestrator/stages/nics/nic_select.h"

namespace cc {

// Whether a first result is probed again: a fail or hang, and also a warn,
// the same failure on a network that was not chosen (NicsPairResults): a
// warning names a pair as surely as a failure does, and one lost connect in
// the burst (at 256 nodes, on the management network) is no reason to.
bool NeedsNicsRetest(const PairResult& r);

// Confirm() for a first result that needs a retest. A warn (a failure off
// the chosen network) is merged like a failure, at its own severity: its
// retest failing or warning again confirms it (the retest stands), passing
// makes it `flaky` (warn), not running leaves it unconfirmed.
PairResult ConfirmNics(const PairResult& first, const PairResult& second);

// Rounds of indices into `probes`: the probes with a result to confirm
// under `selection` (NicsPairResults, NeedsNicsRetest), grouped by pair (every probe of one
// (src, dst) in the same round) into QuietRounds. Probes marked untestable
// in `skip` (a receiver that did not listen: nothing a retest can change)
// are left out. A node in several of the pairs may be in up to
// `pattern_share` pairs of one round (QuietRounds).
std::vector<std::vector<size_t>> NicsRetestRounds(const std::vector<NicProbe>& probes,
                                                  const NicSelection& selection,
                                                  const std::vector<bool>& skip = {},
                                                  size_t pattern_share = 1);

// What the stage retests, and what it does not need to (causes first: a
// confirmation is spent on open questions):
//   - a probe whose sender or receiver has an addressing problem on the
//     probe's subnet (its interface down, the wrong prefix, a duplicate or
//     missing address, a configured MTU off the subnet's: nic_problems.h,
//     all read from the node's facts) is not retested: that problem,
//     read from the node itself, explains it, and a retest would only wait
//     for the same timeouts again;
//   - a node failing with at least kNodePatternPeers peers on one subnet
//     (as sender or receiver) is a node's own failure: it is retested with
//     its first kSampledPeers peers only, and its other probes there take
//     the samples' word (NotRetestedConfirmations).
inline constexpr size_t kNodePatternPeers = 3;
inline constexpr size_t kSampledPeers = 2;
struct NicsRetestPlan {
  std::vector<std::vector<size_t>> rounds;        // as NicsRetestRounds, of the probes retested
  std::map<size_t, std::string> explained;        // probe -> the problem that explains it
  std::map<size_t, std::vector<size_t>> sampled;  // probe -> the probes its node was sampled by
  std::map<size_t, std::string> sampled_node;     // probe -> that node
  std::set<size_t> samples;                       // the probes the nodes were sampled by
};
NicsRetestPlan PlanNicsRetests(const std::vector<NicProbe>& probes, const NicSelection& selection,
                               const std::vector<bool>& skip = {});

// The evidence of each probe the plan did not retest, once the retests
// ran: {"confirmation": "confirmed", "confirmed_by": why} when its problem
// explains it or every sample of its node failed again; {"confirmation":
// "unconfirmed"} when a sample passed or could not run (the node's pattern
// is not established: the probe stands unconfirmed).
std::map<size_t, nlohmann::json> NotRetestedConfirmations(const NicsRetestPlan& plan,
                                                          const std::vector<NicProbe>& first,
                                                          const std::map<size_t, NicProbe>& retests,
                                                          const NicSelection& selection);

// Each probe's latest attempt: its retest where one ran and came back (not
// "error"), else the first attempt. Pointers into `first` and `retests`,
// not a copy: at 256 nodes the probes are a third of the stage's memory.
std::vector<const NicProbe*> LatestProbes(const std::vector<NicProbe>& first,
                                          const std::map<size_t, NicProbe>& retests);

// The pair results under `selection` (the one judged on LatestProbes): a
// first result that needs confirmation and has a retest is merged with the
// retest's result for the same check (Confirm) and counted in `counts`;
// the others are the first attempt's as they are.
// A failing first result without a retest whose index is in
// `not_retested` (NotRetestedConfirmations, indices into `first`) takes
// that evidence.
std::vector<PairResult> ConfirmedNicsResults(
    const std::vector<NicProbe>& first, const std::map<size_t, NicProbe>& retests,
    const NicSelection& selection, RetestCounts* counts,
    const std::map<size_t, nlohmann::json>& not_retested = {});

}  // namespace cc
