// Verdicts from the confirmation of results (confirm.h), for analysis.cc:
//   - flaky: a result whose retest disagreed (evidence "confirmation":
//     "flaky", outcome warn) is a `warn` verdict of kind `flaky` with both
//     attempts. Per stage, like the pair rules: a node in most flaky pairs
//     is named once; flaky pairs spread evenly over the cluster
//     (widespread.h) are one verdict for the stage (a loaded cluster, not a
//     broken one); a few are named pair by pair. Flaky results never feed
//     bad-node or bad-link accusations (they are `warn`), and the generic
//     `warning` rules leave them to this file.
//   - unconfirmed: a failure whose retest could not run (evidence
//     "confirmation": "unconfirmed") is still reported, but the verdict's
//     summary says it was not confirmed and why, and its evidence lists
//     the unconfirmed results.
// Not a public interface.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/analysis/analysis_internal.h"

namespace cc::analysis {

// evidence["confirmation"] of a result: "confirmed", "flaky",
// "unconfirmed", or "" when it was not retested.
std::string ConfirmationOf(const nlohmann::json& evidence);

// Why a result is unconfirmed ("the retest ended error: no agent"); ""
// when it is not.
std::string UnconfirmedWhy(const nlohmann::json& evidence);

// The flaky verdicts of a run's pair and node results.
void FlakyVerdicts(const RunData& data, const NodeOrder& order, std::vector<Verdict>& out);

// Says "not confirmed" in the summary of each verdict built from
// unconfirmed results: those in its evidence "pairs" (each with the
// result's "evidence") or listed by the rule in evidence "unconfirmed"
// ([{"node" or "src"/"dst", "why"}]).
void MarkUnconfirmed(std::vector<Verdict>& verdicts);

}  // namespace cc::analysis
