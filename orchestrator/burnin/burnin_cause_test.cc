#include "orchestrator/burnin/burnin_cause.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "orchestrator/burnin/burnin_simulated_test.h"

namespace cc {
namespace {

using testdata::AnyOf;
using testdata::NodeFails;
using testdata::PairFails;
using testdata::PeerInRound;
using testdata::SimulatedBurnIn;

const std::vector<std::string> kPorts = {"tcp/22", "tcp/29500", "tcp/41000"};

// n4's firewall drops tcp/29500 while rounds `first` to `last` run.
testdata::FailsRule FirewallOnN4(int first, int last) {
  return NodeFails("n4", first, last, "tcp/29500");
}

const PairRate* Rate(const BurnInSummary& s, const std::string& check, const std::string& a,
                     const std::string& b) {
  for (const PairRate& p : s.pairs) {
    if (p.check == check && p.a == a && p.b == b) return &p;
  }
  return nullptr;
}

TEST(BurnInCause, ANodeThatLostOnePortForSomeRoundsIsOneCauseWithItsWindowAndPeers) {
  BurnInSummary s = SimulatedBurnIn(6, 10, kPorts, FirewallOnN4(4, 7));
  std::vector<NodeCause> cs = NodeCauses(s);
  ASSERT_EQ(cs.size(), 1u);
  const NodeCause& c = cs[0];
  EXPECT_EQ(c.node, "n4");
  EXPECT_EQ(c.stage, "ports");
  EXPECT_EQ(c.checks, (std::vector<std::string>{"tcp/29500"}));
  EXPECT_EQ(c.first_round, 4);
  EXPECT_EQ(c.last_round, 7);
  EXPECT_EQ(c.failed_rounds, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(c.rounds_tested, 10);
  EXPECT_DOUBLE_EQ(c.rate(), 0.4);
  EXPECT_FALSE(c.to_the_end) << "it passed again in rounds 8-10";
  std::set<std::string> met;
  for (int r = 4; r <= 7; ++r) met.insert(PeerInRound(6, "n4", r));
  EXPECT_EQ(std::set<std::string>(c.peers.begin(), c.peers.end()), met);
  EXPECT_EQ(c.peers.size(), 4u) << "a different peer in each round of the window";
  EXPECT_EQ(c.pairs.size(), 4u) << "each of those pairs is explained";
  EXPECT_EQ(c.scope, FailureScope::kOnlyThese) << "tcp/22 and tcp/41000 passed with them";
}

TEST(BurnInCause, EachPeerFailingInItsOwnRoundIsTheSameCauseWhenNoRoundBetweenPassed) {
  BurnInSummary s = SimulatedBurnIn(6, 10, kPorts, FirewallOnN4(4, 7));
  // The premise: no two of n4's pairs failed in the same round.
  std::set<int> seen;
  for (const PairRate& p : s.pairs) {
    for (int r : p.failed_rounds) EXPECT_TRUE(seen.insert(r).second) << "round " << r;
  }
  EXPECT_EQ(NodeCauses(s).size(), 1u);
}

TEST(BurnInCause, ANodeThatPassedWithAPeerBetweenItsFailuresIsNoCause) {
  // n4 fails in rounds 2 and 4 but passes with its peer of round 3: two
  // flaky pairs of n4, not a window in which n4 failed with everyone.
  BurnInSummary s = SimulatedBurnIn(6, 10, kPorts, AnyOf({FirewallOnN4(2, 2), FirewallOnN4(4, 4)}));
  EXPECT_TRUE(NodeCauses(s).empty());
}

TEST(BurnInCause, ARoundTheNodeSatOutDoesNotBreakItsWindow) {
  // Five nodes: one sits out each round. n4 fails from round 5 to 9 and
  // sits out one round in between.
  BurnInSummary s = SimulatedBurnIn(5, 10, kPorts, FirewallOnN4(5, 9));
  int bye = 0;
  for (int r = 6; r <= 8; ++r) {
    if (PeerInRound(5, "n4", r).empty()) bye = r;
  }
  ASSERT_NE(bye, 0) << "the premise: n4 sits out a round inside the window";
  std::vector<NodeCause> cs = NodeCauses(s);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].first_round, 5);
  EXPECT_EQ(cs[0].last_round, 9);
  EXPECT_EQ(cs[0].failed_rounds.size(), 4u);
  EXPECT_EQ(std::count(cs[0].failed_rounds.begin(), cs[0].failed_rounds.end(), bye), 0);
  EXPECT_EQ(cs[0].rounds_tested, 8) << "two byes in ten rounds";
}

TEST(BurnInCause, PairsWithNoNodeInCommonFailingInTheSameRoundAreNoCause) {
  // The two pairs of round 3 without n4 (n3-n5, n2-n6) fail together:
  // four nodes failing in one round, but none with two failing peers.
  BurnInSummary s = SimulatedBurnIn(
      6, 10, kPorts,
      AnyOf({PairFails("n3", "n5", 3, 3, "tcp/29500"), PairFails("n2", "n6", 3, 3, "tcp/29500")}));
  int failing = 0;
  for (const PairRate& p : s.pairs) failing += !p.failed_rounds.empty();
  ASSERT_EQ(failing, 2) << "the premise: n3-n5 and n2-n6 failed";
  EXPECT_TRUE(NodeCauses(s).empty());
}

TEST(BurnInCause, APeerThatFailsWithOthersInTheWindowTakesAwayTheNodesAlibi) {
  std::string peer = PeerInRound(6, "n4", 5);
  std::string other = PeerInRound(6, peer, 6);  // in a round of n4's window
  ASSERT_NE(other, "n4");
  BurnInSummary s = SimulatedBurnIn(
      6, 10, kPorts, AnyOf({FirewallOnN4(4, 7), PairFails(peer, other, 6, 6, "tcp/29500")}));
  for (const NodeCause& c : NodeCauses(s)) EXPECT_NE(c.node, "n4") << peer << " may be at fault";
}

TEST(BurnInCause, ANodeThatLostEveryPortIsOneCauseOverAllItsChecks) {
  BurnInSummary s = SimulatedBurnIn(6, 10, kPorts, NodeFails("n4", 4, 7));
  std::vector<NodeCause> cs = NodeCauses(s);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].checks, kPorts);
  EXPECT_EQ(cs[0].pairs.size(), 12u) << "4 peers x 3 ports";
  EXPECT_EQ(cs[0].scope, FailureScope::kEveryCheck);
}

TEST(BurnInCause, ScopeSaysWhatTheOtherChecksOfThePairDidInItsFailedRounds) {
  // n2 and n5 meet in round 6.
  auto one_pair = [](const std::vector<std::string>& failing) {
    std::vector<testdata::FailsRule> rules;
    for (const std::string& check : failing) rules.push_back(PairFails("n2", "n5", 6, 6, check));
    return SimulatedBurnIn(6, 10, kPorts, AnyOf(rules));
  };
  BurnInSummary only = one_pair({"tcp/29500"});
  ASSERT_EQ(Rate(only, "tcp/29500", "n2", "n5")->failed_rounds, (std::vector<int>{6}))
      << "the premise: n2 and n5 meet in round 6";
  EXPECT_EQ(ScopeOf(only, {Rate(only, "tcp/29500", "n2", "n5")}), FailureScope::kOnlyThese);
  BurnInSummary every = one_pair({"tcp/22", "tcp/29500", "tcp/41000"});
  EXPECT_EQ(ScopeOf(every, {Rate(every, "tcp/29500", "n2", "n5")}), FailureScope::kEveryCheck);
  EXPECT_EQ(ScopeOf(every, {Rate(every, "tcp/22", "n2", "n5"), Rate(every, "tcp/29500", "n2", "n5"),
                            Rate(every, "tcp/41000", "n2", "n5")}),
            FailureScope::kEveryCheck)
      << "all the checks failing and nothing else tested";
  BurnInSummary mixed = one_pair({"tcp/22", "tcp/29500"});
  EXPECT_EQ(ScopeOf(mixed, {Rate(mixed, "tcp/29500", "n2", "n5")}), FailureScope::kMixed);
  BurnInSummary alone = SimulatedBurnIn(6, 10, {"allreduce"}, PairFails("n2", "n5", 6, 6));
  ASSERT_EQ(Rate(alone, "allreduce", "n2", "n5")->failures, 1);
  EXPECT_EQ(ScopeOf(alone, {Rate(alone, "allreduce", "n2", "n5")}), FailureScope::kAlone);
}

}  // namespace
}  // namespace cc
