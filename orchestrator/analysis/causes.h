// Causes first (analysis.h): a verdict that is a cause (verdict.h
// CauseScope: a stage established a fault on a node or a link, or the
// health stage found a node to reboot or drain) leads the list, the pair
// rules do not see the pairs of its scope (its partners are not accused for
// them), and every other verdict that only causes explain is counted
// inside the first cause it touches ("this also explains ...") instead of
// being printed on its own. A cause found by a later stage that an
// earlier stage's cause explains (ports finds node4 isolated; nics had
// found its link down) is a symptom too. Pure.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/store/run_data.h"
#include "orchestrator/store/verdict.h"

namespace cc::analysis {

// Whether `v` is a cause that analysis ranks first: a cause scope and a
// severity of fail or hang.
bool IsCause(const Verdict& v);

// The nodes and links the causes among `verdicts` cover.
struct CausedScope {
  std::set<std::string> nodes;
  std::set<std::pair<std::string, std::string>> links;  // (min, max)
  std::set<std::string> link_ends;                      // the nodes of `links`
  bool empty() const { return nodes.empty() && links.empty(); }
  // Whether the pair a-b (either way round) is a cause's: one of its nodes
  // has a node cause, or it is a caused link.
  bool Covers(const std::string& a, const std::string& b) const;
};
CausedScope ScopeOfCauses(const std::vector<Verdict>& verdicts);

// `data` without the pair results `scope` covers; the failing ones among
// them are counted in `*hidden`, per node ("n4") and per link ("n2 n5").
RunData WithoutPairsOf(const RunData& data, const CausedScope& scope,
                       std::map<std::string, size_t>* hidden);

// Folds into the causes of `out` what they explain (see above), credits
// each cause with the failing pairs of its scope that `hidden` counted,
// and says so in its summary. `stage_rank` orders the stages as the run
// ran them (earlier causes explain later ones). A node verdict of a pair
// stage (`pair_stages`: nics' "node2 does not reach node5") about an end
// of a caused link is that link's symptom too. Keeps the order of what is
// left.
void FoldIntoCauses(const std::map<std::string, size_t>& hidden,
                    const std::map<std::string, size_t>& stage_rank,
                    const std::set<std::string>& pair_stages, std::vector<Verdict>& out);

// For each cause among `out`: what the later stages that left its nodes
// out (results skipped with value "contained", run/containment.h) did on
// the rest of the cluster, appended to its summary: "without it, mpi
// passed on the other 7 nodes", or "without it, mpi still fails on
// node[1-2]".
void SayWhatTheRestDid(const RunData& data, std::vector<Verdict>& out);

// The stored causes of a run that no earlier stage's cause explains, in
// the order the stages ran: what the run's headline names.
std::vector<Verdict> LeadingCauses(const RunData& data);

}  // namespace cc::analysis
