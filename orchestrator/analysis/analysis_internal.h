// Helpers shared by analysis.cc (node verdicts) and analysis_pairs.cc
// (pair and bandwidth verdicts), and with a stage's own verdict code
// (StageSpec::node_verdicts). Not for reports.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/analysis/analysis.h"

namespace cc::analysis {

// Node names in run order; names the run did not list come after, in the
// order first seen.
class NodeOrder {
 public:
  explicit NodeOrder(const RunData& data);
  size_t Index(const std::string& node) const;
  // Sorted by run order, duplicates dropped.
  std::vector<std::string> Sorted(const std::set<std::string>& nodes) const;

 private:
  std::map<std::string, size_t> index_;
};

// Pairs of one (stage, check) already named by a verdict, so that later
// rules do not repeat them. Directed keys; an undirected claim adds both.
using PairSet = std::set<std::pair<std::string, std::string>>;

// The pair and bandwidth verdicts of one run (analysis_pairs.cc). Stages
// in `attributed` stored their own verdicts: only their bandwidth and
// hangs are judged here.
void AnalyzePairs(const RunData& data, const AnalysisOptions& options, const NodeOrder& order,
                  const std::set<std::string>& attributed, std::vector<Verdict>& out);

// A pair result as verdict evidence: src, dst, outcome, state, value,
// unit, message and the result's own evidence.
nlohmann::json PairEvidence(const PairResult& r);

// One stage, one widespread verdict: the widespread verdicts of a stage's
// checks from out[from] on (nics tcp and mtu on one subnet) fold into the
// first, each check's evidence kept under "checks" (analysis_fold.cc).
void FoldWidespreadByStage(const NodeOrder& order, std::vector<Verdict>& out, size_t from);

// One node, one verdict: a node that is a bad node in several stages
// (its link is down: nics and ports both fail with every peer) keeps the
// verdict of the stage that ran first, which is closest to the cause (and
// whose next step says it); the later ones become its `explains`
// (Verdict::explains), and its summary says how many it explains.
// The same for a node that is flaky in several stages (a lossy link).
void FoldSymptomsAcrossStages(const RunData& data, std::vector<Verdict>& out);

// The pairs of a stage's warnings (ports: "connected, but no token came back
// in time") that involve the node of that stage's flaky node verdict
// (or are its flaky pair) are the same unreliable link, not a
// second finding: they become the flaky verdict's evidence "warnings".
void FoldWarningsIntoFlaky(std::vector<Verdict>& out);

// Stages in the order the run's results first name them (the order they
// ran in).
std::map<std::string, size_t> StageRanks(const RunData& data);

// The MTU most nodes of each subnet have, from the stages that measure
// the cluster's networks (StageSpec::subnet_mtus), for verdict_next_step.h.
nlohmann::json SubnetMtusOf(const RunData& data);

// Appends `item` to evidence[key], an array; never throws: evidence that
// is no object is kept under "details", a key of another shape under
// key + "_stored".
void AppendTo(nlohmann::json& evidence, const char* key, nlohmann::json item);

// "gpu01", "gpu01 and gpu02", "gpu[01-04]" (folded).
std::string NodesPhrase(const std::vector<std::string>& nodes);

}  // namespace cc::analysis
