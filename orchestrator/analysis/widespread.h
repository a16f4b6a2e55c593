// One cause, one verdict: is a stage's set of failing pairs one
// cluster-wide problem (an overloaded receiver side, a switch, a policy on
// every node) rather than many separate links?
//
// The rule, over the failing and tested pairs that no bad node or other
// verdict explains yet:
//   - widespread when the failures are spread over most nodes and evenly:
//       at least `min_pairs` failing pairs, touching at least
//       `most_nodes_fraction` of the tested nodes, and no node stands out
//       (no node's share of failing partners exceeds `standout_factor`
//       times the mean share of the nodes touched, and no node is in
//       more than half of the failing pairs);
//   - also widespread when most tested pairs fail (more than half), what
//     ever the spread: no node or link can explain that;
//   - otherwise not: few failures, or failures that gather on some nodes,
//     are named pair by pair (or node by node) by the other rules; the
//     nodes that stand out are returned so that a caller can say so.
// A pair is undirected here; both directions failing count once.
//
// Pure: no I/O; thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cc {

struct SpreadOptions {
  // Fewer failing pairs than this are never widespread. Default 4.
  size_t min_pairs = 4;
  // The failing pairs must touch at least this fraction of the tested
  // nodes. Default 0.5. REQUIRES: 0 < most_nodes_fraction <= 1.
  double most_nodes_fraction = 0.5;
  // A node whose share of failing partners is above this factor times the
  // mean share (over the nodes touched) stands out. Default 4: at low
  // failure rates a node's count is Poisson-noisy (1 or 2 on most nodes, 5
  // on an unlucky one), and an unlucky node is no cause.
  // REQUIRES: standout_factor >= 1.
  double standout_factor = 4.0;
};

struct Spread {
  bool widespread = false;
  size_t failed_pairs = 0;
  size_t tested_pairs = 0;
  size_t nodes_touched = 0;    // nodes in at least one failing pair
  size_t nodes_tested = 0;     // nodes in at least one tested pair
  double share = 0;            // failed_pairs / tested_pairs
  double mean_node_share = 0;  // mean over the nodes touched
  std::string worst_node;      // the node with the largest share ("" for none)
  double worst_node_share = 0;
  std::vector<std::string> standouts;  // nodes that stand out, sorted by name
};

// `tested`: every tested pair (failing ones included), `failed`: the
// failing ones; each undirected, each pair once.
Spread JudgeSpread(const std::vector<std::pair<std::string, std::string>>& tested,
                   const std::vector<std::pair<std::string, std::string>>& failed,
                   const SpreadOptions& options = {});

}  // namespace cc
