#include "orchestrator/stages/mpi/mpi_confirm.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

NodeResult Node(const std::string& node, const std::string& check, Outcome o) {
  NodeResult r;
  r.node = node;
  r.stage = "mpi";
  r.check = check;
  r.outcome = o;
  r.message = node + " " + check + " " + OutcomeName(o);
  return r;
}

PairResult Pair(const std::string& a, const std::string& b, Outcome o) {
  PairResult r;
  r.stage = "mpi";
  r.src = a;
  r.dst = b;
  r.check = "latency";
  r.outcome = o;
  r.message = a + "-" + b + " " + OutcomeName(o);
  return r;
}

TEST(MpiConfirm, AHealthyJobNeedsNoSecondLaunch) {
  MpiRunJudgement j;
  j.nodes = {Node("n1", "launch", Outcome::kPass), Node("n2", "launch", Outcome::kWarn)};
  j.pairs = {Pair("n1", "n2", Outcome::kPass)};
  EXPECT_FALSE(MpiNeedsConfirmation(j));
  j.pairs[0].outcome = Outcome::kHang;
  EXPECT_TRUE(MpiNeedsConfirmation(j));
}

TEST(MpiConfirm, AFailureTheRelaunchRepeatsIsConfirmed) {
  MpiRunJudgement first, second;
  first.nodes = {Node("n1", "launch", Outcome::kPass), Node("n2", "launch", Outcome::kFail)};
  second.nodes = {Node("n1", "launch", Outcome::kPass), Node("n2", "launch", Outcome::kFail)};
  RetestCounts c;
  MpiRunJudgement m = MergeMpiAttempts(first, second, &c);
  ASSERT_EQ(m.nodes.size(), 2u);
  EXPECT_EQ(m.nodes[0].outcome, Outcome::kPass);
  EXPECT_FALSE(m.nodes[0].evidence.contains("confirmation"));
  EXPECT_EQ(m.nodes[1].outcome, Outcome::kFail);
  EXPECT_EQ(m.nodes[1].evidence["confirmation"], kConfirmed);
  EXPECT_EQ(m.nodes[1].evidence["attempts"].size(), 2u);
  EXPECT_EQ(c.retested, 1);
  EXPECT_EQ(c.confirmed, 1);
}

TEST(MpiConfirm, AHangThatPassesOnTheRelaunchIsFlaky) {
  MpiRunJudgement first, second;
  first.pairs = {Pair("n1", "n2", Outcome::kHang), Pair("n3", "n4", Outcome::kPass)};
  second.pairs = {Pair("n1", "n2", Outcome::kPass), Pair("n3", "n4", Outcome::kFail)};
  RetestCounts c;
  MpiRunJudgement m = MergeMpiAttempts(first, second, &c);
  EXPECT_EQ(m.pairs[0].outcome, Outcome::kWarn);
  EXPECT_TRUE(IsFlaky(m.pairs[0]));
  // A pair that passed the first time is not re-judged by the relaunch.
  EXPECT_EQ(m.pairs[1].outcome, Outcome::kPass);
  EXPECT_EQ(c.flaky, 1);
  EXPECT_EQ(c.retested, 1);
}

TEST(MpiConfirm, APairIsFoundInTheRetestEitherWayRound) {
  MpiRunJudgement first, second;
  first.pairs = {Pair("n1", "n2", Outcome::kFail)};
  second.pairs = {Pair("n2", "n1", Outcome::kFail)};
  RetestCounts c;
  PairResult r = MergeMpiAttempts(first, second, &c).pairs[0];
  EXPECT_EQ(r.evidence["confirmation"], kConfirmed);
  EXPECT_EQ(r.src, "n1");  // named as the first attempt named it
}

TEST(MpiConfirm, AResultTheRelaunchLacksStaysUnconfirmed) {
  MpiRunJudgement first, second;
  first.nodes = {Node("n2", "allreduce", Outcome::kFail)};
  RetestCounts c;
  NodeResult r = MergeMpiAttempts(first, second, &c).nodes[0];
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_EQ(r.evidence["confirmation"], kUnconfirmed);
  EXPECT_EQ(c.unconfirmed, 1);
}

TEST(MpiConfirm, ARankThatDidNotStartOnceIsAFlakyLaunchWhenTheRelaunchStartsIt) {
  MpiRunJudgement first, second;
  first.nodes = {Node("n2", "launch", Outcome::kError)};
  second.nodes = {Node("n2", "launch", Outcome::kPass)};
  EXPECT_TRUE(MpiNeedsConfirmation(first));
  RetestCounts c;
  NodeResult r = MergeMpiAttempts(first, second, &c).nodes[0];
  EXPECT_EQ(r.outcome, Outcome::kWarn);
  EXPECT_EQ(r.evidence["confirmation"], kFlaky);
}

TEST(MpiConfirm, ARetestThatSaysWhyItCouldNotTestStandsUnconfirmed) {
  MpiRunJudgement first, second;
  first.nodes = {Node("n1", "launch", Outcome::kHang)};
  second.nodes = {Node("n1", "launch", Outcome::kError)};
  second.nodes[0].message = "did not start: the launch failed because of n3";
  RetestCounts c;
  NodeResult r = MergeMpiAttempts(first, second, &c).nodes[0];
  EXPECT_EQ(r.outcome, Outcome::kError);
  EXPECT_EQ(r.message, "did not start: the launch failed because of n3");
  EXPECT_EQ(r.evidence["confirmation"], kUnconfirmed);
  EXPECT_EQ(r.evidence["attempts"].size(), 2u);
}

TEST(MpiConfirm, APairTheFirstJobNeverReachedPassesPlainlyOnTheRetest) {
  // issue 17: the first job was stopped before these pairs' rounds; they
  // were never tested, so a pass on the retest is no flakiness.
  MpiRunJudgement first, second;
  PairResult unreached = Pair("n1", "n2", Outcome::kError);
  unreached.state = "not-reached";
  unreached.message = "not reached: the job was stopped at its deadline after round 60 of 127";
  PairResult unreached_too = unreached;
  unreached_too.src = "n3";
  unreached_too.dst = "n4";
  first.pairs = {unreached, unreached_too};
  second.pairs = {Pair("n1", "n2", Outcome::kPass), Pair("n3", "n4", Outcome::kFail)};
  EXPECT_TRUE(MpiNeedsConfirmation(first));  // the whole job runs again
  RetestCounts c;
  MpiRunJudgement m = MergeMpiAttempts(first, second, &c);
  EXPECT_EQ(m.pairs[0].outcome, Outcome::kPass);
  EXPECT_FALSE(IsFlaky(m.pairs[0]));
  EXPECT_EQ(m.pairs[0].evidence["attempts"].size(), 2u);
  // Failing on its only measurement: stands, but unconfirmed.
  EXPECT_EQ(m.pairs[1].outcome, Outcome::kFail);
  EXPECT_EQ(m.pairs[1].evidence["confirmation"], kUnconfirmed);
  EXPECT_EQ(c.flaky, 0);
  EXPECT_EQ(c.retested, 1);
  EXPECT_EQ(c.unconfirmed, 1);
}

TEST(MpiConfirm, APairWhoseLineTheAbortedFirstJobNeverWrotePassesPlainlyOnTheRetest) {
  // 256 simulated nodes: a rank aborted the first job (exit 3) and the
  // lines of 14 pairs never came; the relaunch measured them all.
  MpiRunJudgement first, second;
  PairResult lost = Pair("n1", "n2", Outcome::kError);
  lost.state = "unreported";
  lost.message = "not reported: mpirun exited 3 before this pair's result came";
  first.pairs = {lost};
  second.pairs = {Pair("n2", "n1", Outcome::kPass)};
  EXPECT_TRUE(MpiNeedsConfirmation(first));
  RetestCounts c;
  MpiRunJudgement m = MergeMpiAttempts(first, second, &c);
  EXPECT_EQ(m.pairs[0].outcome, Outcome::kPass);
  EXPECT_FALSE(IsFlaky(m.pairs[0]));
  EXPECT_EQ(m.pairs[0].evidence["attempts"][0]["state"], "unreported");
  EXPECT_EQ(c.flaky, 0);
}

}  // namespace
}  // namespace cc
