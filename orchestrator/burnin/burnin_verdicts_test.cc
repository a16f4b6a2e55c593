#include "orchestrator/burnin/burnin_verdicts.h"

#include <gtest/gtest.h>

#include "orchestrator/burnin/burnin_plan.h"
#include "orchestrator/burnin/burnin_simulated_test.h"

namespace cc {
namespace {

using testdata::AnyOf;
using testdata::NodeFails;
using testdata::PairFails;
using testdata::SimulatedBurnIn;

// A burn-in of `n` nodes and `rounds` rounds of the circle method on one
// check, tcp/29500, where `fails(a, b, round)` says whether that pair's
// check failed that round.
template <typename Fails>
BurnInSummary Simulated(int n, int rounds, Fails fails) {
  return SimulatedBurnIn(n, rounds, {"tcp/29500"},
                         [&](const std::string&, const std::string& a, const std::string& b,
                             int r) { return fails(a, b, r); });
}

std::string Summaries(const std::vector<Verdict>& vs) {
  std::string out;
  for (const Verdict& v : vs) out += v.kind + ": " + v.summary + "\n";
  return out;
}

const PairRate& Rate(const BurnInSummary& s, const std::string& a, const std::string& b) {
  for (const PairRate& p : s.pairs) {
    if (p.a == a && p.b == b) return p;
  }
  throw std::runtime_error("no pair " + a + "-" + b);
}

TEST(BurnInRate, PassWarnFailBySharedRateAndEveryRound) {
  PairRate p;
  JudgePairRate(p, 0);
  EXPECT_EQ(p.outcome, Outcome::kSkip) << "never attempted is not a pass";
  p.attempts = 20;
  JudgePairRate(p, 0);
  EXPECT_EQ(p.outcome, Outcome::kPass);
  p.failures = 1;
  p.rate = 0.05;
  JudgePairRate(p, 0);
  EXPECT_EQ(p.outcome, Outcome::kFail) << "default threshold 0: any flakiness fails the burn-in";
  JudgePairRate(p, 0.05);
  EXPECT_EQ(p.outcome, Outcome::kWarn) << "at the threshold is within it";
  JudgePairRate(p, 0.04);
  EXPECT_EQ(p.outcome, Outcome::kFail);
  p.failures = 19;
  p.hangs = 1;
  p.rate = 1;
  JudgePairRate(p, 1.0);
  EXPECT_EQ(p.outcome, Outcome::kFail) << "failing every round is a fail whatever the threshold";
}

TEST(BurnInVerdicts, AHealthyBurnInNamesNothing) {
  BurnInSummary s = Simulated(6, 20, [](auto&, auto&, int) { return false; });
  std::vector<Verdict> vs = BurnInVerdicts(s);
  EXPECT_TRUE(vs.empty());
  EXPECT_EQ(BurnInExitCode(vs), kExitOk);
  for (const PairRate& p : s.pairs) EXPECT_EQ(p.outcome, Outcome::kPass);
}

TEST(BurnInVerdicts, APairFailingInSomeRoundsIsFlakyWithItsRateAndRounds) {
  BurnInSummary s = Simulated(6, 20, [](const std::string& a, const std::string& b, int r) {
    return a == "n2" && b == "n5" && r > 10;
  });
  const PairRate& p = Rate(s, "n2", "n5");
  ASSERT_EQ(p.attempts, 4);
  std::vector<Verdict> vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].kind, "flaky");
  EXPECT_EQ(vs[0].severity, Outcome::kFail);
  EXPECT_EQ(vs[0].pairs, (std::vector<NodePair>{{"n2", "n5"}}));
  EXPECT_DOUBLE_EQ(vs[0].evidence["rate"].get<double>(), p.rate);
  EXPECT_EQ(vs[0].evidence["failed_rounds"], p.failed_rounds);
  EXPECT_EQ(vs[0].evidence["burnin"], true);
  EXPECT_NE(vs[0].summary.find("n2 and n5"), std::string::npos) << vs[0].summary;
  EXPECT_EQ(BurnInExitCode(vs), kExitFailed);

  s.max_failure_rate = 0.6;
  vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].severity, Outcome::kWarn) << "within [burnin] max_failure_rate";
  EXPECT_EQ(BurnInExitCode(vs), kExitOk);
}

const std::vector<std::string> kPorts = {"tcp/22", "tcp/29500", "tcp/41000"};

TEST(BurnInVerdicts, ALinkLosingEveryPortIsOnePairVerdictWithTheCableStep) {
  BurnInSummary s = SimulatedBurnIn(6, 20, kPorts, PairFails("n2", "n5", 11, 20));
  std::vector<Verdict> vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 1u) << Summaries(vs);
  EXPECT_EQ(vs[0].kind, "flaky");
  EXPECT_EQ(vs[0].evidence["checks"].size(), 3u);
  EXPECT_EQ(vs[0].summary,
            "n2 and n5 tcp/22, tcp/29500 and 1 more failed in 2 of the 4 rounds they met (50%): "
            "rounds 11, 16; no ports passed then");
  EXPECT_EQ(vs[0].next_step,
            "reseat or replace the cable between n2 and n5 and read its port counters");
}

TEST(BurnInVerdicts, APairLosingOnePortWhileItsOtherPortsPassIsAFirewallNotACable) {
  BurnInSummary s = SimulatedBurnIn(6, 20, kPorts, PairFails("n2", "n5", 11, 20, "tcp/29500"));
  std::vector<Verdict> vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 1u) << Summaries(vs);
  EXPECT_EQ(vs[0].summary,
            "n2 and n5 tcp/29500 failed in 2 of the 4 rounds they met (50%): rounds 11, 16; their "
            "other ports passed");
  EXPECT_EQ(vs[0].next_step,
            "check the firewalls of n2 and n5 for tcp 29500 (iptables -S; nft list ruleset); not "
            "the cable: their other ports passed then");
}

TEST(BurnInVerdicts, APairFailingEveryRoundIsABadLink) {
  BurnInSummary s = Simulated(6, 20, [](const std::string& a, const std::string& b, int) {
    return a == "n1" && b == "n3";
  });
  std::vector<Verdict> vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].kind, "bad-link");
  EXPECT_EQ(vs[0].severity, Outcome::kFail);
}

// The trend rule: a node whose pairs all fail from round 10 on is named
// with round 10; none of its peers, and none of its pairs one by one.
TEST(BurnInVerdicts, ANodeWhosePairsAllFailFromARoundIsNamedWithThatRound) {
  BurnInSummary s = Simulated(6, 20, [](const std::string& a, const std::string& b, int r) {
    return (a == "n4" || b == "n4") && r >= 10;
  });
  std::vector<Verdict> vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 1u) << Summaries(vs);
  EXPECT_EQ(vs[0].kind, "bad-node");
  EXPECT_EQ(vs[0].nodes, (std::vector<std::string>{"n4"}));
  EXPECT_EQ(vs[0].evidence["first_failing_round"], 10);
  EXPECT_NE(vs[0].summary.find("from round 10"), std::string::npos) << vs[0].summary;
}

TEST(BurnInVerdicts, ANodeIsNotTheCauseWhenOneOfItsPairsStillPassesLater) {
  BurnInSummary s = Simulated(6, 20, [](const std::string& a, const std::string& b, int r) {
    bool mine = a == "n4" || b == "n4";
    return mine && r >= 10 && r != 17;  // round 17 passed: not "all from 10 on"
  });
  for (const Verdict& v : BurnInVerdicts(s)) EXPECT_NE(v.kind, "bad-node") << v.summary;
}

TEST(BurnInVerdicts, TwoBadPairsSharingANodeWithoutATrendStayPairs) {
  // n1-n2 and n1-n3 flaky, n1's other pairs fine: two links, not a node.
  BurnInSummary s = Simulated(6, 20, [](const std::string& a, const std::string& b, int r) {
    return a == "n1" && (b == "n2" || b == "n3") && r % 2 == 0;
  });
  std::vector<Verdict> vs = BurnInVerdicts(s);
  for (const Verdict& v : vs) EXPECT_NE(v.kind, "bad-node") << v.summary;
}

// n4's firewall drops tcp/29500 while rounds 4 to 7 run: it meets n2,
// n5, n3 and n6 then (the circle method over 6 nodes), each once.
BurnInSummary FirewallWindowOnN4() {
  return SimulatedBurnIn(6, 10, kPorts, NodeFails("n4", 4, 7, "tcp/29500"));
}

TEST(BurnInVerdicts, ANodeThatLostOnePortForSomeRoundsIsOneVerdictWithItsRateRoundsAndFirewall) {
  BurnInSummary s = FirewallWindowOnN4();
  std::vector<Verdict> vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 1u) << "its four flaky pairs are not named again:\n" << Summaries(vs);
  const Verdict& v = vs[0];
  EXPECT_EQ(v.kind, "bad-node");
  EXPECT_EQ(v.severity, Outcome::kFail) << "40% is above max_failure_rate 0";
  EXPECT_EQ(v.nodes, (std::vector<std::string>{"n4"}));
  EXPECT_EQ(v.check, "tcp/29500");
  EXPECT_EQ(v.summary,
            "n4 tcp/29500 failed in 4 of 10 rounds (40%), rounds 4-7, with all 4 peers it met "
            "then (n[2-3,5-6]); its other ports passed");
  EXPECT_EQ(v.next_step,
            "check the firewall on n4 for tcp 29500 (iptables -S; nft list ruleset) and what "
            "changed it in rounds 4-7; not a cable: its other ports passed with the same peers");
  EXPECT_EQ(v.pairs.size(), 4u);
  EXPECT_EQ(v.evidence["pairs"].size(), 4u) << "the pair verdicts it explains, counted in it";
  EXPECT_DOUBLE_EQ(v.evidence["rate"].get<double>(), 0.4);
  EXPECT_EQ(v.evidence["failed_rounds"], (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(v.evidence["last_failing_round"], 7);
  EXPECT_EQ(v.evidence["other_checks"], "only-these");

  s.max_failure_rate = 0.4;
  vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].severity, Outcome::kWarn) << "it recovered, within [burnin] max_failure_rate";
}

TEST(BurnInVerdicts, ANodeThatLostEveryPortIsOneVerdictAboutItsLink) {
  BurnInSummary s = SimulatedBurnIn(6, 10, kPorts, NodeFails("n4", 4, 7));
  std::vector<Verdict> vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 1u) << Summaries(vs);
  EXPECT_EQ(vs[0].summary,
            "n4 tcp/22, tcp/29500 and 1 more failed in 4 of 10 rounds (40%), rounds 4-7, with all "
            "4 peers it met then (n[2-3,5-6]); no ports passed then");
  EXPECT_EQ(vs[0].next_step,
            "check n4's link in rounds 4-7: its NIC, cable and switch port (ip -s link; ethtool "
            "-S; the switch's port counters)");
}

TEST(BurnInVerdicts, TwoFlakyPairsWithUnrelatedPeersStayTwoPairVerdicts) {
  // n1-n2 (round 5) and n4-n6 (round 2) fail tcp/29500: two nodes' pairs,
  // no node in common.
  BurnInSummary s = SimulatedBurnIn(
      6, 10, kPorts,
      AnyOf({PairFails("n1", "n2", 5, 5, "tcp/29500"), PairFails("n4", "n6", 2, 2, "tcp/29500")}));
  std::vector<Verdict> vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 2u) << Summaries(vs);
  EXPECT_EQ(vs[0].kind, "flaky");
  EXPECT_EQ(vs[0].pairs, (std::vector<NodePair>{{"n1", "n2"}}));
  EXPECT_EQ(vs[1].kind, "flaky");
  EXPECT_EQ(vs[1].pairs, (std::vector<NodePair>{{"n4", "n6"}}));
}

TEST(BurnInVerdicts, ANodeThatPassedBetweenItsFailuresKeepsItsPairVerdicts) {
  // n4 fails with n6 in round 2 and with n2 in round 4, and passes with
  // n1 in round 3 between them.
  BurnInSummary s = SimulatedBurnIn(
      6, 10, kPorts,
      AnyOf({NodeFails("n4", 2, 2, "tcp/29500"), NodeFails("n4", 4, 4, "tcp/29500")}));
  std::vector<Verdict> vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 2u) << Summaries(vs);
  for (const Verdict& v : vs) EXPECT_EQ(v.kind, "flaky") << v.summary;
}

// busbw per round: 100 GB/s, but pairs with `slow` from round `from` on
// fall to `to`; `noise` alternates +-5 % on every pair.
void AddBusbw(BurnInSummary& s, const std::string& slow, int from, double to) {
  for (PairRate& p : s.pairs) {
    p.stage = "nccl";
    p.check = "allreduce";
    for (int r : p.rounds) {
      bool down = (p.a == slow || p.b == slow) && r >= from;
      double noise = r % 2 ? 1.05 : 0.95;
      p.values.push_back({r, r * 60.0, (down ? to : 100) * noise});
    }
  }
}

TEST(BurnInVerdicts, ANodeWhosePairsAllLoseBandwidthIsNamedAsAWarning) {
  BurnInSummary s = Simulated(6, 20, [](auto&, auto&, int) { return false; });
  AddBusbw(s, "n3", 8, 60);
  std::vector<Verdict> vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 1u) << Summaries(vs);
  EXPECT_EQ(vs[0].kind, "bad-node");
  EXPECT_EQ(vs[0].severity, Outcome::kWarn);
  EXPECT_EQ(vs[0].nodes, (std::vector<std::string>{"n3"}));
  EXPECT_EQ(vs[0].evidence["stage_kind"], "degrading");
  EXPECT_NE(vs[0].summary.find("down to 6"), std::string::npos) << vs[0].summary;  // 60 of ~100
}

TEST(BurnInVerdicts, NoiseOrASmallDropNamesNoOne) {
  BurnInSummary s = Simulated(6, 20, [](auto&, auto&, int) { return false; });
  AddBusbw(s, "n3", 8, 85);  // 15 %: under the 20 % that counts
  EXPECT_TRUE(BurnInVerdicts(s).empty()) << Summaries(BurnInVerdicts(s));
  BurnInSummary healthy = Simulated(6, 20, [](auto&, auto&, int) { return false; });
  AddBusbw(healthy, "none", 1, 0);
  EXPECT_TRUE(BurnInVerdicts(healthy).empty());
}

TEST(BurnInVerdicts, AWholeClusterSlowingDownBlamesNoNode) {
  BurnInSummary s = Simulated(6, 20, [](auto&, auto&, int) { return false; });
  for (PairRate& p : s.pairs) {
    for (int r : p.rounds) p.values.push_back({r, r * 60.0, r >= 10 ? 50.0 : 100.0});
  }
  for (const Verdict& v : BurnInVerdicts(s)) EXPECT_NE(v.kind, "bad-node") << v.summary;
}

TEST(BurnInVerdicts, ACounterThatKeepsMovingIsNamedPerHour) {
  BurnInSummary s;
  CounterSeries rising{"n2", "mlx5_0/1 symbol_error", {{1, 0, 5}, {2, 600, 7}, {3, 1200, 9}}, 24};
  CounterSeries once{"n3", "mlx5_0/1 symbol_error", {{1, 0, 5}, {2, 600, 6}, {3, 1200, 6}}, 3};
  s.counters = {rising, once};
  std::vector<Verdict> vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].nodes, (std::vector<std::string>{"n2"}));
  EXPECT_EQ(vs[0].evidence["stage_kind"], "counter-rising");
  EXPECT_NE(vs[0].summary.find("+24.0 per hour"), std::string::npos) << vs[0].summary;
}

GpuSample Sample(int round, double mhz, uint64_t reasons = 0) {
  GpuSample g;
  g.round = round;
  g.elapsed_s = round * 60.0;
  g.sm_clock_mhz = mhz;
  g.temperature_c = 50 + round;
  g.clock_event_reasons = reasons;
  return g;
}

TEST(BurnInVerdicts, AGpuWhoseClocksDropAndStayOrThatSlowsForHeatIsNamed) {
  BurnInSummary s;
  BurnInSummary::NodeGpus dropping{"n1", {}};
  BurnInSummary::NodeGpus steady{"n2", {}};
  BurnInSummary::NodeGpus hot{"n3", {}};
  for (int r = 1; r <= 8; ++r) {
    dropping.samples.push_back(Sample(r, r < 6 ? 1980 : 1400));
    steady.samples.push_back(Sample(r, r == 4 ? 1400 : 1980));  // one dip, back
    hot.samples.push_back(Sample(r, 1980, r >= 7 ? 0x40 : 0));
  }
  BurnInSummary::NodeGpus idle{"n4", {}};
  for (int r = 1; r <= 8; ++r) idle.samples.push_back(Sample(r, r < 6 ? 1980 : 345, r < 6 ? 0 : 1));
  s.gpus = {dropping, steady, hot, idle};
  std::vector<Verdict> vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 2u);
  EXPECT_EQ(vs[0].nodes, (std::vector<std::string>{"n1"}));
  EXPECT_EQ(vs[0].evidence["stage_kind"], "clocks-drop");
  EXPECT_EQ(vs[0].evidence["first_round"], 6);
  EXPECT_EQ(vs[1].nodes, (std::vector<std::string>{"n3"}));
  EXPECT_EQ(vs[1].evidence["stage_kind"], "thermal-slowdown");
  EXPECT_EQ(vs[1].evidence["first_round"], 7);
  EXPECT_EQ(BurnInExitCode(vs), kExitOk) << "GPU and counter findings warn";
}

}  // namespace
}  // namespace cc
