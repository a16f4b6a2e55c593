// From pair outcomes to names: which node is bad, which link is bad, and
// which further probes would tell the rest apart. Pure.
//
// The reasoning an operator does by hand over a round-robin matrix:
// - a node that fails with (nearly) every partner, while those partners pass
//   with others, is the bad one;
// - a single failing pair whose two nodes both pass with others is a bad
//   link (cable, switch port, a route), and neither node is blamed;
// - anything else is unexplained: its nodes are suspects, to be re-paired
//   with known-good nodes (NextProbesToIsolate).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "orchestrator/run/schedule.h"

namespace cc {

struct PairOutcome {
  std::string a;
  std::string b;
  // pass/warn count as working, fail/hang as broken; skip/error say
  // nothing. A pair listed twice (a re-probe) is broken if any test broke.
  Outcome outcome = Outcome::kPass;
};

struct AttributionInput {
  std::vector<std::string> nodes;
  std::vector<PairOutcome> pairs;
  // The node's own intra-node test; absent = not tested. A broken one names
  // the node bad whatever its pairs say.
  std::map<std::string, Outcome> intra_node;
};

struct NodeBlame {
  std::string node;
  Outcome outcome = Outcome::kFail;  // kHang if any of its failures hung
  std::string reason;
  std::vector<std::string> failed_with;  // partners of failing pairs
  std::vector<std::string> passed_with;
};

struct LinkBlame {
  std::string a;
  std::string b;
  Outcome outcome = Outcome::kFail;
  std::string reason;
};

struct Attribution {
  std::vector<NodeBlame> bad_nodes;  // sorted by name
  std::vector<LinkBlame> bad_links;  // sorted
  // Broken pairs no blame above explains, and their nodes.
  std::vector<NodePair> unexplained;
  std::vector<std::string> suspects;
  // Nodes not named bad, not suspects, that passed with at least one
  // partner: safe probe partners.
  std::vector<std::string> known_good;
};

// A node is named bad when its intra-node test broke, or when it broke with
// at least 2 partners, with more partners than it worked with, and at least
// half of those partners work with someone else.
Attribution AttributeFailures(const AttributionInput& input);

// One round of disjoint probe pairs: each suspect paired with a known-good
// node it has not been tested with yet. Empty when there are no suspects or
// no known-good partner is left (then the matrix cannot say more).
std::vector<NodePair> NextProbesToIsolate(const AttributionInput& input,
                                          const Attribution& attribution);

}  // namespace cc
