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

// Rounds of indices into `probes`: the probes with a result to confirm
// under `selection` (NicsPairResults), grouped by pair (every probe of one
// (src, dst) in the same round) into QuietRounds. Probes marked untestable
// in `skip` (a receiver that did not listen: nothing a retest can change)
// are left out.
std::vector<std::vector<size_t>> NicsRetestRounds(const std::vector<NicProbe>& probes,
                                                  const NicSelection& selection,
                                                  const std::vector<bool>& skip = {});

// Each probe's latest attempt: its retest where one ran and came back (not
// "error"), else the first attempt.
std::vector<NicProbe> LatestProbes(const std::vector<NicProbe>& first,
                                   const std::map<size_t, NicProbe>& retests);

// The pair results under `selection` (the one judged on LatestProbes): a
// first result that needs confirmation and has a retest is merged with the
// retest's result for the same check (Confirm) and counted in `counts`;
// the others are the first attempt's as they are.
std::vector<PairResult> ConfirmedNicsResults(const std::vector<NicProbe>& first,
                                             const std::map<size_t, NicProbe>& retests,
                                             const NicSelection& selection, RetestCounts* counts);

}  // namespace cc
