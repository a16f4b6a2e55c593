// Confirmation of the `mpi` stage (confirm.h): no node or pair is accused
// on one mpirun. When the first job has a `fail` or `hang`, the whole job is
// launched again after it, with a longer deadline (its pairs already meet
// in disjoint rounds, so each rank talks to one peer at a time), and every
// accusation of the first job is merged with the same result of the second.
// Pure; thread-safe.
#pragma once

#include "orchestrator/run/confirm.h"
#include "orchestrator/stages/mpi/mpi_verdict.h"

namespace cc {

// True when some node or pair result of `j` is fail, hang or error (a rank
// that did not start, or what was not run because of it).
bool MpiNeedsConfirmation(const MpiRunJudgement& j);

// `first` with each fail, hang or error merged with its retest
// in `second` (Confirm / ConfirmNode: same node and check; same pair either
// way round and check). A result the retest lacks stays unconfirmed; a
// retest that is `error` (not tested: another node's launch failed) stands,
// unconfirmed, as it says why. Results
// that passed the first time are kept as they are. Every merge is counted.
MpiRunJudgement MergeMpiAttempts(const MpiRunJudgement& first, const MpiRunJudgement& second,
                                 RetestCounts* counts);

}  // namespace cc
