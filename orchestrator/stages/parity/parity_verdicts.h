// The parity stage's verdicts (its StageSpec's node_verdicts hook): one
// verdict per failing or warning field, not one per node, with the
// values each node has and what they should be. The kind follows what the
// check compares against (parity.h ParityCheckKind): the majority
// ("odd-version"), an [expect] pin ("pin-mismatch") or a compatibility
// rule ("incompatible"). Pure; thread-safe.
#pragma once

#include <vector>

#include "orchestrator/analysis/analysis.h"
#include "orchestrator/analysis/analysis_internal.h"

namespace cc {

void ParityVerdicts(const RunData& run, const analysis::NodeOrder& order,
                    std::vector<Verdict>& out);

}  // namespace cc
