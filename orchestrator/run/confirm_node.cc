#include "orchestrator/run/confirm_node.h"

namespace cc {
namespace {

// Confirm() works on pairs; a node result is the pair (node, node). Its
// string value has no place in a PairResult and is carried around it.
PairResult AsPair(const NodeResult& n) {
  PairResult p;
  p.run_id = n.run_id;
  p.stage = n.stage;
  p.src = p.dst = n.node;
  p.check = n.check;
  p.outcome = n.outcome;
  p.state = n.value;
  p.message = n.message;
  p.evidence = n.evidence;
  p.at = n.at;
  return p;
}

}  // namespace

NodeResult ConfirmNode(const NodeResult& first, const NodeResult& second) {
  PairResult merged = Confirm(AsPair(first), AsPair(second));
  // Confirm() keeps the retest on agreement, else the first attempt.
  NodeResult r = NeedsConfirmation(second.outcome) ? second : first;
  r.outcome = merged.outcome;
  r.message = merged.message;
  r.evidence = merged.evidence;
  return r;
}

void AddNodeRetest(const NodeResult& merged, RetestCounts* counts) { counts->Add(AsPair(merged)); }

}  // namespace cc
