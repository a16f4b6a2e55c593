// Naming the bad node(s) or link behind a broken NCCL group test in few
// runs, by adaptive group testing. Pure: the tests themselves are run by a
// callback (the nccl stage starts agents; unit tests answer from a model).
//
// A group test is one communicator over a set of nodes. It breaks when it
// holds a bad node, or both ends of a bad link (or when the problem only
// shows at that scale: then the group is reported as unexplained).
//
// The search, for a group known to be broken:
//   split   test both halves at once (a half of one node gets a known-good
//           partner); a broken half is searched further; two working halves
//           mean the fault needs members of both: cross search;
//   pair    a broken pair {x, y}: x and y each with its own known-good
//           partner, at once. A node that fails with its pair and with a
//           known-good partner is bad; both pass: the x-y link is bad;
//   cross   halves L and R work alone, L+R breaks: find a in L such that
//           {a}+R breaks (bisecting L, testing one half per step), then b in
//           R such that {a,b} breaks; confirmed by the pair {a,b} itself.
// Tests of different tasks run together when they share no node, so one
// "round" is one batch of disjoint communicators.
//
// Cost for one bad node among n (a power of two): log2(n)-1 split rounds of
// two tests, then two pair tests: 2*log2(n) tests, 12 for 64 nodes.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "orchestrator/run/schedule.h"

namespace cc {

using NodeGroup = std::vector<std::string>;

// Runs a batch of disjoint group tests at once; returns one outcome per
// group, in order: pass/warn = works, fail/hang = broken, skip/error = could
// not be told (the task that asked is given up as unexplained).
using RunGroupBatch = std::function<std::vector<Outcome>(const std::vector<NodeGroup>&)>;

struct IsolationTest {
  NodeGroup nodes;
  Outcome outcome = Outcome::kError;
  int round = 0;        // 1-based batch number
  std::string purpose;  // "split", "pair", "cross", "confirm"
};

struct IsolationResult {
  std::vector<std::string> bad_nodes;  // sorted
  std::vector<NodePair> bad_links;     // sorted, a < b
  // Broken groups no node or link explains (or that could not be tested).
  std::vector<NodeGroup> unexplained;
  std::vector<IsolationTest> tests;  // every test run, in order
  int rounds = 0;                    // batches run
  bool budget_exhausted = false;
};

struct IsolationOptions {
  // Nodes known to work with others (they passed a multi-node test); used
  // as partners. More are learned as groups pass.
  std::set<std::string> known_good;
  // Nodes already named bad elsewhere: never used as partners.
  std::set<std::string> known_bad;
  // Stop after this many tests (each is a communicator); 0 = 4*n + 16.
  int max_tests = 0;
};

// Searches `broken` (a group whose test broke, >= 2 nodes) for what broke
// it. `run` is called once per round with the round's disjoint groups.
IsolationResult IsolateBrokenGroup(const NodeGroup& broken, const RunGroupBatch& run,
                                   const IsolationOptions& options = {});

}  // namespace cc
