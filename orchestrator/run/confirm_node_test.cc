#include "orchestrator/run/confirm_node.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

NodeResult Result(Outcome o, const std::string& msg) {
  NodeResult r;
  r.node = "node3";
  r.stage = "mpi";
  r.check = "launch";
  r.outcome = o;
  r.value = OutcomeName(o);
  r.message = msg;
  return r;
}

TEST(ConfirmNode, AFailureThatRepeatsIsConfirmedWithBothAttempts) {
  NodeResult r = ConfirmNode(Result(Outcome::kFail, "no hello"), Result(Outcome::kHang, "hung"));
  EXPECT_EQ(r.outcome, Outcome::kHang);
  EXPECT_EQ(r.node, "node3");
  EXPECT_EQ(r.evidence["confirmation"], kConfirmed);
  ASSERT_EQ(r.evidence["attempts"].size(), 2u);
  EXPECT_EQ(r.evidence["attempts"][0]["message"], "no hello");
}

TEST(ConfirmNode, AFailureThatPassesOnRetestIsAFlakyWarn) {
  NodeResult r = ConfirmNode(Result(Outcome::kFail, "no hello"), Result(Outcome::kPass, "started"));
  EXPECT_EQ(r.outcome, Outcome::kWarn);
  EXPECT_EQ(r.evidence["confirmation"], kFlaky);
  EXPECT_NE(r.message.find("flaky"), std::string::npos);
  RetestCounts c;
  AddNodeRetest(r, &c);
  EXPECT_EQ(c.flaky, 1);
  EXPECT_EQ(c.retested, 1);
}

TEST(ConfirmNode, ARetestThatCouldNotRunLeavesTheFailureUnconfirmed) {
  NodeResult r = ConfirmNode(Result(Outcome::kFail, "no hello"), Result(Outcome::kError, "x"));
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_EQ(r.evidence["confirmation"], kUnconfirmed);
}

}  // namespace
}  // namespace cc
