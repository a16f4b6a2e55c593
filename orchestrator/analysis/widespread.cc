#include "orchestrator/analysis/widespread.h"

#include <set>

namespace cc {
namespace {

using Pair = std::pair<std::string, std::string>;

// Counts each node's partners in `pairs`, a pair and its reverse once.
std::map<std::string, size_t> PartnerCounts(const std::vector<Pair>& pairs, size_t* distinct) {
  std::set<Pair> seen;
  std::map<std::string, size_t> count;
  for (const auto& [a, b] : pairs) {
    if (a == b) continue;
    Pair key = a < b ? Pair{a, b} : Pair{b, a};
    if (!seen.insert(key).second) continue;
    ++count[a];
    ++count[b];
  }
  *distinct = seen.size();
  return count;
}

}  // namespace

Spread JudgeSpread(const std::vector<Pair>& tested, const std::vector<Pair>& failed,
                   const SpreadOptions& o) {
  Spread s;
  std::map<std::string, size_t> tested_of = PartnerCounts(tested, &s.tested_pairs);
  std::map<std::string, size_t> failed_of = PartnerCounts(failed, &s.failed_pairs);
  s.nodes_tested = tested_of.size();
  s.nodes_touched = failed_of.size();
  if (s.tested_pairs == 0 || s.failed_pairs == 0) return s;
  s.share = static_cast<double>(s.failed_pairs) / s.tested_pairs;

  // A node's share: of the partners it was tested with, how many failed.
  std::map<std::string, double> share_of;
  double sum = 0;
  for (const auto& [node, n] : failed_of) {
    size_t partners = std::max(tested_of[node], n);
    share_of[node] = static_cast<double>(n) / partners;
    sum += share_of[node];
    if (share_of[node] > s.worst_node_share) {
      s.worst_node_share = share_of[node];
      s.worst_node = node;
    }
  }
  s.mean_node_share = sum / share_of.size();
  for (const auto& [node, share] : share_of) {
    // Either far above the others, or in most failing pairs: in a small
    // cluster a node that fails with all 5 partners is only 3x the mean.
    bool in_most = s.failed_pairs >= 2 && failed_of[node] * 2 > s.failed_pairs;
    if (share > o.standout_factor * s.mean_node_share || in_most) s.standouts.push_back(node);
  }

  bool most_pairs = s.tested_pairs >= 3 && s.failed_pairs * 2 > s.tested_pairs;
  bool spread_out = s.failed_pairs >= o.min_pairs &&
                    s.nodes_touched >= o.most_nodes_fraction * s.nodes_tested &&
                    s.standouts.empty();
  s.widespread = most_pairs || spread_out;
  return s;
}

}  // namespace cc
