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
// are left out.
std::vector<std::vector<size_t>> NicsRetestRounds(const std::vector<NicProbe>& probes,
                                                  const NicSelection& selection,
                                                  const std::vector<bool>& skip = {});

// Each probe's latest attempt: its retest where one ran and came back (not
// "error"), else the first attempt. Pointers into `first` and `retests`,
// not a copy: at 256 nodes the probes are a third of the stage's memory.
std::vector<const NicProbe*> LatestProbes(const std::vector<NicProbe>& first,
                                          const std::map<size_t, NicProbe>& retests);

// The pair results under `selection` (the one judged on LatestProbes): a
// first result that needs confirmation and has a retest is merged with the
// retest's result for the same check (Confirm) and counted in `counts`;
// the others are the first attempt's as they are.
std::vector<PairResult> ConfirmedNicsResults(const std::vector<NicProbe>& first,
                                             const std::map<size_t, NicProbe>& retests,
                                             const NicSelection& selection, RetestCounts* counts);

}  // namespace cc
