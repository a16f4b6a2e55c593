#include "orchestrator/burnin/burnin_verdicts.h"

#include <gtest/gtest.h>

#include "orchestrator/burnin/burnin_plan.h"

namespace cc {
namespace {

// A burn-in of `n` nodes and `rounds` rounds of the circle method, where
// `fails(a, b, round)` says whether that pair's check failed that round.
template <typename Fails>
BurnInSummary Simulated(int n, int rounds, Fails fails) {
  BurnInSummary s;
  for (int i = 1; i <= n; ++i) s.nodes.push_back("n" + std::to_string(i));
  s.rounds_done = rounds;
  std::map<NodePair, PairRate> rates;
  for (int r = 1; r <= rounds; ++r) {
    for (NodePair p : BurnInRoundPairs(s.nodes, r)) {
      if (p.second < p.first) std::swap(p.first, p.second);
      PairRate& rate = rates[p];
      rate.stage = "ports";
      rate.check = "tcp/29500";
      rate.a = p.first;
      rate.b = p.second;
      ++rate.attempts;
      rate.rounds.push_back(r);
      if (fails(p.first, p.second, r)) {
        ++rate.failures;
        rate.failed_rounds.push_back(r);
      }
    }
  }
  for (auto& [p, rate] : rates) {
    rate.rate = static_cast<double>(rate.failures) / rate.attempts;
    s.pairs.push_back(rate);
  }
  return s;
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

TEST(BurnInVerdicts, ALossyLinkFailingEveryPortIsOneVerdictNamingItsChecks) {
  BurnInSummary s = Simulated(6, 20, [](const std::string& a, const std::string& b, int r) {
    return a == "n2" && b == "n5" && r > 10;
  });
  std::vector<PairRate> more;
  for (const char* port : {"tcp/22", "tcp/41000"}) {
    for (PairRate p : s.pairs) {
      p.check = port;
      more.push_back(p);
    }
  }
  s.pairs.insert(s.pairs.end(), more.begin(), more.end());
  std::vector<Verdict> vs = BurnInVerdicts(s);
  ASSERT_EQ(vs.size(), 1u) << Summaries(vs);
  EXPECT_EQ(vs[0].evidence["checks"].size(), 3u);
  EXPECT_NE(vs[0].summary.find("tcp/29500, tcp/22 and 1 more"), std::string::npos) << vs[0].summary;
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
