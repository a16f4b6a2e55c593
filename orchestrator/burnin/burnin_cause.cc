#include "orchestrator/burnin/burnin_cause.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace cc {
namespace {

bool Failed(const PairRate& p) { return p.failures + p.hangs > 0; }

bool FailedIn(const PairRate& p, int round) {
  return std::binary_search(p.failed_rounds.begin(), p.failed_rounds.end(), round);
}

bool TestedIn(const PairRate& p, int round) {
  return std::binary_search(p.rounds.begin(), p.rounds.end(), round);
}

bool Has(const PairRate& p, const std::string& node) { return p.a == node || p.b == node; }

const std::string& PeerOf(const PairRate& p, const std::string& node) {
  return p.a == node ? p.b : p.a;
}

// The peer's alibi: with nodes other than `node`, on the stage and check
// of `like`, it was tested in the window [first, last] and never failed
// there. (In a round each node is in one pair, so the alibi comes from the
// other rounds of the window, not from the failing round itself.)
bool PeerWorksWithOthers(const BurnInSummary& s, const PairRate& like, const std::string& node,
                         const std::string& peer, int first, int last) {
  bool tested = false;
  for (const PairRate& q : s.pairs) {
    if (q.stage != like.stage || q.check != like.check) continue;
    if (!Has(q, peer) || Has(q, node)) continue;
    for (int round : q.rounds) tested |= round >= first && round <= last;
    for (int round : q.failed_rounds) {
      if (round >= first && round <= last) return false;
    }
  }
  return tested;
}

// The rule of the header for one node and one check (`mine`: the node's
// pair checks of that stage and check); nothing when the node is not the
// cause.
std::optional<NodeCause> CauseOnOneCheck(const BurnInSummary& s,
                                         const std::vector<const PairRate*>& mine,
                                         const std::string& node) {
  std::set<int> tested, failed;
  std::set<std::string> failing_peers;
  for (const PairRate* p : mine) {
    tested.insert(p->rounds.begin(), p->rounds.end());
    failed.insert(p->failed_rounds.begin(), p->failed_rounds.end());
    if (Failed(*p)) failing_peers.insert(PeerOf(*p, node));
  }
  if (failing_peers.size() < 2) return std::nullopt;
  int first = *failed.begin(), last = *failed.rbegin();
  for (int round : tested) {
    if (round >= first && round <= last && !failed.count(round)) return std::nullopt;
  }
  NodeCause c;
  for (const PairRate* p : mine) {
    if (!Failed(*p)) continue;
    // A peer that fails with others too may be the one at fault: without
    // its alibi the node is not named.
    if (!PeerWorksWithOthers(s, *p, node, PeerOf(*p, node), first, last)) return std::nullopt;
    c.pairs.push_back(p);
  }
  c.node = node;
  c.stage = mine.front()->stage;
  c.checks = {mine.front()->check};
  c.first_round = first;
  c.last_round = last;
  c.failed_rounds.assign(failed.begin(), failed.end());
  c.rounds_tested = static_cast<int>(tested.size());
  c.to_the_end = last == *tested.rbegin();
  return c;
}

void SortPeers(const BurnInSummary& s, NodeCause& c) {
  std::set<std::string> peers;
  for (const PairRate* p : c.pairs) peers.insert(PeerOf(*p, c.node));
  c.peers.clear();
  for (const std::string& n : s.nodes) {
    if (peers.count(n)) c.peers.push_back(n);
  }
}

}  // namespace

double NodeCause::rate() const {
  return rounds_tested ? static_cast<double>(failed_rounds.size()) / rounds_tested : 0;
}

FailureScope ScopeOf(const BurnInSummary& s, const std::vector<const PairRate*>& failing) {
  std::set<const PairRate*> mine(failing.begin(), failing.end());
  std::set<std::string> checks;
  int passed = 0, failed = 0;
  for (const PairRate* p : failing) {
    checks.insert(p->check);
    for (const PairRate& q : s.pairs) {
      if (mine.count(&q) || q.stage != p->stage || q.a != p->a || q.b != p->b) continue;
      for (int round : p->failed_rounds) {
        if (!TestedIn(q, round)) continue;
        (FailedIn(q, round) ? failed : passed) += 1;
      }
    }
  }
  if (passed == 0 && failed == 0) {
    return checks.size() > 1 ? FailureScope::kEveryCheck : FailureScope::kAlone;
  }
  if (failed == 0) return FailureScope::kOnlyThese;
  return passed == 0 ? FailureScope::kEveryCheck : FailureScope::kMixed;
}

std::vector<NodeCause> NodeCauses(const BurnInSummary& s) {
  std::vector<std::pair<std::string, std::string>> order;  // stage, check
  std::map<std::pair<std::string, std::string>, std::vector<const PairRate*>> by_check;
  for (const PairRate& p : s.pairs) {
    std::pair<std::string, std::string> key{p.stage, p.check};
    if (!by_check.count(key)) order.push_back(key);
    by_check[key].push_back(&p);
  }
  std::vector<NodeCause> out;
  std::set<const PairRate*> explained;
  for (const auto& key : order) {
    for (const std::string& node : s.nodes) {
      std::vector<const PairRate*> mine;
      for (const PairRate* p : by_check[key]) {
        if (Has(*p, node)) mine.push_back(p);
      }
      if (mine.empty()) continue;
      std::optional<NodeCause> c = CauseOnOneCheck(s, mine, node);
      if (!c || std::any_of(c->pairs.begin(), c->pairs.end(),
                            [&](const PairRate* p) { return explained.count(p) > 0; })) {
        continue;
      }
      explained.insert(c->pairs.begin(), c->pairs.end());
      // The same node failing another check of the stage in the same
      // window is the same cause: a lost link fails every port at once.
      auto same = std::find_if(out.begin(), out.end(), [&](const NodeCause& o) {
        return o.node == c->node && o.stage == c->stage && o.first_round == c->first_round &&
               o.last_round == c->last_round;
      });
      if (same == out.end()) {
        out.push_back(std::move(*c));
      } else {
        same->checks.push_back(c->checks.front());
        same->pairs.insert(same->pairs.end(), c->pairs.begin(), c->pairs.end());
      }
    }
  }
  for (NodeCause& c : out) {
    SortPeers(s, c);
    c.scope = ScopeOf(s, c.pairs);
  }
  return out;
}

}  // namespace cc
