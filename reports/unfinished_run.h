// What a report says about a run that never finished: a run whose
// controller was killed ("killed", see orchestrator/run/run_liveness.h) or one
// still going ("running"). Everything stored so far is real (each result is
// written the moment it is known), so the report names what it has per
// stage and where it stopped, rather than judging the run as a whole.
#pragma once

#include <string>

#include "orchestrator/store/run_data.h"

namespace cc {

// "" for a finished run. Otherwise lines such as
//   killed: controller pid 4242 on ctl1 died without finishing the run (...)
//   stored before it died: connect 3 pass; facts 3 pass; sleep nothing
//   last result at 2026-12-03T10:00:01Z
// The reason comes from run.meta["liveness"] (ApplyRunLiveness).
std::string DescribeUnfinishedRun(const RunData& data);

}  // namespace cc
