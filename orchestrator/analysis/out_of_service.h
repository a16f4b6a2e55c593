// Nodes a verdict takes out of service: its evidence names the action
// "reboot" or "drain" (the health stage's hardware findings: a GPU off the
// bus, a failed row remap). Such a node cannot be trusted to test its
// links, so the pair rules do not see its pairs (its partners are not
// accused for them), its verdicts lead the list, and the other verdicts
// that only it explains are folded into it ("this also explains ...").
// Pure.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "orchestrator/store/run_data.h"
#include "orchestrator/store/verdict.h"

namespace cc::analysis {

// Whether `v` takes its nodes out of service.
bool TakesOutOfService(const Verdict& v);

// The nodes of the verdicts that take them out of service.
std::set<std::string> OutOfServiceNodes(const std::vector<Verdict>& verdicts);

// `data` without the pair results that involve any of `nodes`; how many of
// those did not pass is added per node to `*hidden` ({node: count}).
RunData WithoutPairsOf(const RunData& data, const std::set<std::string>& nodes,
                       std::map<std::string, size_t>* hidden);

// Folds into each out-of-service verdict the other verdicts that only its
// nodes explain (every pair involves one of them; or, without pairs, every
// node is one of them), and says how many failing pairs it hid from the
// pair rules. Keeps the order of what is left.
void FoldIntoOutOfService(const std::map<std::string, size_t>& hidden, std::vector<Verdict>& out);

}  // namespace cc::analysis
