#include "orchestrator/stages/ports/ports_retest.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "orchestrator/run/confirm.h"

namespace cc {
namespace {

PlannedProbe P(std::string src, std::string dst, int port, PortKind kind = PortKind::kListed) {
  return {src, dst, "10.0.0.1", port, kind, false, ""};
}

// n1..n5 probe each other on tcp/29500 and tcp/22 and one ephemeral port;
// `fails` says which first attempts failed.
struct Fixture {
  std::vector<PlannedProbe> plan;
  std::vector<Outcome> first;
  Fixture(const std::function<bool(int, int, int)>& fails) {
    for (int s = 1; s <= 5; ++s) {
      for (int d = 1; d <= 5; ++d) {
        if (s == d) continue;
        for (int port : {22, 29500, 40000}) {
          plan.push_back(P("n" + std::to_string(s), "n" + std::to_string(d), port,
                           port == 40000 ? PortKind::kEphemeral : PortKind::kListed));
          first.push_back(fails(s, d, port) ? Outcome::kFail : Outcome::kPass);
        }
      }
    }
  }
};

TEST(SymptomBudget, AReceiversPortIsCoveredAfterEnoughConfirmations) {
  Fixture f([](int, int d, int port) { return d == 3 && port == 29500; });
  SymptomBudget b(f.plan, f.first, 2);
  EXPECT_FALSE(b.Covered(P("n1", "n3", 29500)));
  b.Confirmed(P("n1", "n3", 29500));
  EXPECT_FALSE(b.Covered(P("n2", "n3", 29500)));
  b.Confirmed(P("n2", "n3", 29500));
  EXPECT_TRUE(b.Covered(P("n4", "n3", 29500)));
  EXPECT_FALSE(b.Covered(P("n4", "n3", 22)));     // another port: another symptom
  EXPECT_FALSE(b.Covered(P("n4", "n5", 29500)));  // another receiver
}

TEST(SymptomBudget, FirstAttemptsToldOneAtATimeCountAsTheWholePlanGivenAtOnce) {
  // The ports stage holds no plan (probe_plan.h) and tells each attempt.
  Fixture f([](int s, int d, int port) { return (d == 3 && port == 29500) || s == 1; });
  SymptomBudget whole(f.plan, f.first, 2);
  SymptomBudget told(2);
  for (size_t i = 0; i < f.plan.size(); ++i) told.FirstAttempt(f.plan[i], f.first[i]);
  for (const auto& [src, dst] : {std::pair{"n1", "n2"}, {"n2", "n3"}, {"n4", "n3"}, {"n1", "n3"}}) {
    whole.Confirmed(P(src, dst, 29500));
    told.Confirmed(P(src, dst, 29500));
  }
  for (const PlannedProbe& p : f.plan)
    EXPECT_EQ(told.Covered(p), whole.Covered(p)) << p.src << p.dst;
  SymptomBudget nothing_worked(1);
  nothing_worked.FirstAttempt(P("n2", "n3", 29500), Outcome::kFail);
  nothing_worked.Confirmed(P("n2", "n3", 29500));  // no peer to compare: no suspect
  EXPECT_FALSE(nothing_worked.Covered(P("n4", "n3", 29500)));
}

TEST(SymptomBudget, ASendersPortIsCoveredWhenItsReceiversWorkForOthers) {
  Fixture f([](int s, int, int) { return s == 1; });
  SymptomBudget b(f.plan, f.first, 2);
  b.Confirmed(P("n1", "n2", 22));
  b.Confirmed(P("n1", "n3", 22));
  EXPECT_TRUE(b.Covered(P("n1", "n4", 22)));
  EXPECT_FALSE(b.Covered(P("n1", "n4", 29500)));
  EXPECT_FALSE(b.Covered(P("n2", "n4", 22)));  // n4's tcp/22 is not the symptom
}

TEST(SymptomBudget, FailuresToReceiversThatDropAPortSayNothingAboutTheSender) {
  // n3, n4 and n5 drop tcp/29500: n1's three failures are theirs, not n1's.
  Fixture f([](int, int d, int port) { return d >= 3 && port == 29500; });
  SymptomBudget b(f.plan, f.first, 2);
  b.Confirmed(P("n1", "n3", 29500));
  b.Confirmed(P("n1", "n4", 29500));
  EXPECT_FALSE(b.Covered(P("n1", "n5", 29500)));
}

TEST(SymptomBudget, EphemeralPortsAreOneSymptomPerNode) {
  Fixture f([](int, int d, int port) { return d == 5 && port == 40000; });
  SymptomBudget b(f.plan, f.first, 1);
  b.Confirmed(P("n1", "n5", 40000, PortKind::kEphemeral));
  EXPECT_TRUE(b.Covered(P("n2", "n5", 41000, PortKind::kEphemeral)));
  EXPECT_FALSE(b.Covered(P("n2", "n5", 41000, PortKind::kListed)));
}

TEST(SymptomBudget, RetestsPlannedInOneRoundCountTowardsTheSymptomUntilTheRoundEnds) {
  Fixture f([](int, int d, int port) { return d == 5 && port == 40000; });
  SymptomBudget b(f.plan, f.first, 2);
  b.Planned(P("n1", "n5", 40000, PortKind::kEphemeral));
  EXPECT_FALSE(b.Covered(P("n2", "n5", 41000, PortKind::kEphemeral)));
  b.Planned(P("n2", "n5", 41000, PortKind::kEphemeral));
  EXPECT_TRUE(b.Covered(P("n3", "n5", 42000, PortKind::kEphemeral))) << "two are on their way";
  EXPECT_FALSE(b.ConfirmedEnough(P("n3", "n5", 42000, PortKind::kEphemeral)));
  b.EndRound();
  EXPECT_FALSE(b.Covered(P("n3", "n5", 42000, PortKind::kEphemeral))) << "none came back";
}

TEST(RetestRounds, OneProberPerReceiverAndNoNodeTwiceInARound) {
  std::vector<PlannedProbe> plan;
  std::vector<size_t> failed;
  for (std::string src : {"n1", "n2", "n4", "n5"}) {
    for (int port : {29500, 29501}) {
      failed.push_back(plan.size());
      plan.push_back(P(src, "n3", port));
    }
  }
  failed.push_back(plan.size());
  plan.push_back(P("n4", "n5", 22));
  auto rounds = RetestRounds(plan, failed);
  // n3 receives from four senders: a node-level pattern, confirmed with
  // them at once; n4 and n5, in two failing pairs each, may share a round
  // too; n1 and n2, in one each, are once a round.
  ASSERT_EQ(rounds.size(), 1u);
  auto share = [](const std::string& n) {
    return n == "n1" || n == "n2" ? 1 : static_cast<int>(kPatternShare);
  };
  size_t probes = 0;
  for (const auto& round : rounds) {
    std::map<std::string, int> busy;
    for (const RetestPair& p : round) {
      EXPECT_LE(++busy[p.src], share(p.src)) << p.src;
      EXPECT_LE(++busy[p.dst], share(p.dst)) << p.dst;
      for (size_t i : p.probes) {
        EXPECT_EQ(plan[i].src, p.src);
        EXPECT_EQ(plan[i].dst, p.dst);
      }
      probes += p.probes.size();
    }
  }
  EXPECT_EQ(probes, failed.size());
  EXPECT_EQ(rounds[0][0].probes.size(), 2u);  // a pair's ports in one burst
}

PairResult Probe(Outcome o, std::string state, std::string message) {
  PairResult r;
  r.stage = "ports";
  r.src = "n1";
  r.dst = "n2";
  r.check = "tcp/29500";
  r.outcome = o;
  r.state = std::move(state);
  r.message = std::move(message);
  return r;
}
PairResult TokenTimeout() {
  return Probe(Outcome::kWarn, "open", "connected to n2:29500, but no token came back in time");
}

TEST(PortsToRetest, TakesFailsHangsAndTokenTimeoutsOnly) {
  std::vector<PairResult> rs = {Probe(Outcome::kPass, "open", ""), TokenTimeout(),
                                Probe(Outcome::kFail, "filtered", "x"),
                                Probe(Outcome::kWarn, "in-use", "held by another process"),
                                Probe(Outcome::kHang, "error", "y")};
  EXPECT_EQ(PortsToRetest(rs), (std::vector<size_t>{1, 2, 4}));
  EXPECT_TRUE(IsTokenTimeout(rs[1]));
  EXPECT_FALSE(IsTokenTimeout(rs[3]));  // an unexpected holder is a real warn
}

TEST(ConfirmPortProbe, ATokenTimeoutThatPassesOnRetestIsLoadAndEndsPass) {
  PairResult m = ConfirmPortProbe(TokenTimeout(), Probe(Outcome::kPass, "open", ""));
  EXPECT_EQ(m.outcome, Outcome::kPass);  // not flaky: a healthy cluster has zero warns
  EXPECT_EQ(m.evidence["confirmation"], kCleared);
  ASSERT_EQ(m.evidence["attempts"].size(), 2u);
  EXPECT_EQ(m.evidence["attempts"][0]["outcome"], "warn");
  EXPECT_EQ(m.evidence["attempts"][1]["outcome"], "pass");
  EXPECT_FALSE(IsFlaky(m));
}

TEST(ConfirmPortProbe, ATokenTimeoutTwiceStaysAConfirmedWarn) {
  PairResult m = ConfirmPortProbe(TokenTimeout(), TokenTimeout());
  EXPECT_EQ(m.outcome, Outcome::kWarn);
  EXPECT_EQ(m.evidence["confirmation"], kConfirmed);
}

TEST(ConfirmPortProbe, AConnectThenAFailureIsFlaky) {
  PairResult m = ConfirmPortProbe(TokenTimeout(), Probe(Outcome::kFail, "filtered", "timed out"));
  EXPECT_EQ(m.outcome, Outcome::kWarn);
  EXPECT_TRUE(IsFlaky(m));
  EXPECT_NE(m.message.find("timed out on the retest"), std::string::npos);
}

TEST(ConfirmPortProbe, ARetestThatCouldNotRunLeavesTheTokenTimeoutUnconfirmed) {
  PairResult m = ConfirmPortProbe(TokenTimeout(), Probe(Outcome::kError, "error", "agent gone"));
  EXPECT_EQ(m.outcome, Outcome::kWarn);
  EXPECT_EQ(m.evidence["confirmation"], kUnconfirmed);
}

TEST(ConfirmPortProbe, OtherFirstAttemptsAreMergedByConfirm) {
  PairResult fail = Probe(Outcome::kFail, "filtered", "x");
  PairResult m = ConfirmPortProbe(fail, Probe(Outcome::kPass, "open", ""));
  EXPECT_TRUE(IsFlaky(m));  // a fail that passes on retest is still flaky
  EXPECT_EQ(ConfirmPortProbe(fail, fail).evidence["confirmation"], kConfirmed);
}

}  // namespace
}  // namespace cc
