// For a run on one machine (`make run`): one block per stage saying what it
// measured here or why it could not, so that a newcomer sees every stage
// of the pipeline, not only a count of skips. Pure.
#pragma once

#include <string>

#include "orchestrator/store/run_data.h"

namespace cc {

// Per stage in run order: "  nccl     3 skip" and, indented below it, the
// distinct messages of its results that are not a plain pass (at most
// three per stage), each with its nodes folded into a range:
//     local[1-2]: no GPU: the facts say gpu absent (...)
// A stage that stored nothing says so.
std::string RenderStageLines(const RunData& data);

}  // namespace cc
