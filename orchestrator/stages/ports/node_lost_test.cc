#include "orchestrator/stages/ports/node_lost.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(MeansNodeLost, ChannelFailuresMeanLostAndAgentErrorsDoNot) {
  EXPECT_TRUE(MeansNodeLost(Status::Timeout("no answer")));
  EXPECT_TRUE(MeansNodeLost(Status::Eof("agent stdout closed")));
  EXPECT_TRUE(MeansNodeLost(Status::Io("write failed")));
  EXPECT_FALSE(MeansNodeLost(Status::Ok()));
  EXPECT_FALSE(MeansNodeLost(Status::Protocol("bad chunk")));
  EXPECT_FALSE(MeansNodeLost(Status::Internal("agent: probe: bad args")));
}

TEST(HiddenByLoss, OnlyFailuresTouchingALostNodeAreHidden) {
  std::set<std::string> lost = {"n3"};
  EXPECT_TRUE(HiddenByLoss("n1", "n3", Outcome::kFail, "filtered", lost));
  EXPECT_TRUE(HiddenByLoss("n3", "n1", Outcome::kHang, "error", lost));
  EXPECT_TRUE(HiddenByLoss("n3", "n1", Outcome::kError, "error", lost));
  EXPECT_TRUE(HiddenByLoss("n1", "n3", Outcome::kWarn, "open", lost));       // no token: cut off
  EXPECT_FALSE(HiddenByLoss("n1", "n3", Outcome::kPass, "open", lost));      // measured before
  EXPECT_FALSE(HiddenByLoss("n1", "n3", Outcome::kWarn, "in-use", lost));    // a real finding
  EXPECT_FALSE(HiddenByLoss("n1", "n2", Outcome::kFail, "filtered", lost));  // not about n3
}

TEST(NodeLostVerdict, NamesTheNodeWhenItWasLostAndWhatWasMeasuredBefore) {
  LostNode lost{"n3", "probe batch 2 of 3", 1020, 12250, "timeout: no probes within 11.5 s"};
  std::vector<PortCell> before = {
      {"n1", "n3", 22, PortKind::kSsh, "open", Outcome::kPass},
      {"n3", "n2", 29500, PortKind::kListed, "open", Outcome::kPass},
      {"n3", "n2", 22, PortKind::kSsh, "open", Outcome::kPass},
      {"n1", "n2", 22, PortKind::kSsh, "open", Outcome::kPass},  // not about n3
  };
  PortVerdict v = NodeLostVerdict(lost, before);
  EXPECT_EQ(v.kind, "node-lost");
  EXPECT_EQ(v.severity, Outcome::kFail);
  EXPECT_EQ(v.nodes, (std::vector<std::string>{"n3"}));
  EXPECT_NE(
      v.message.find(
          "n3 was lost during the ports stage (probe batch 2 of 3, between 1.0 s and 12.2 s after "
          "the stage started)"),
      std::string::npos)
      << v.message;
  EXPECT_NE(v.message.find("3 probes with 2 peers"), std::string::npos) << v.message;
  EXPECT_EQ(v.evidence["measured_before"]["as_sender"]["open"], 2);
  EXPECT_EQ(v.evidence["measured_before"]["as_receiver"]["open"], 1);
  EXPECT_EQ(v.evidence["lost_in"], "probe batch 2 of 3");
  EXPECT_NE(v.next_step.find("n3"), std::string::npos);
}

TEST(NodeLostVerdict, SaysSoWhenNothingWasMeasured) {
  PortVerdict v = NodeLostVerdict({"n3", "probe batch 1 of 1", 0, 100, "eof"}, {});
  EXPECT_NE(v.message.find("Nothing was measured with it before"), std::string::npos);
}

TEST(NodeLostVerdict, ANodeThatAnsweredAFreshConnectionIsAWarnNotAnAccusation) {
  LostNode lost{"n3", "probe batch 2 of 3", 1020, 12250,
                "unreachable: connection was cut at an earlier deadline"};
  lost.asked_again = true;
  lost.answered_again = true;
  PortVerdict v = NodeLostVerdict(lost, {{"n1", "n3", 22, PortKind::kSsh, "open", Outcome::kPass}});
  EXPECT_EQ(v.kind, "contact-lost");
  EXPECT_EQ(v.severity, Outcome::kWarn);
  EXPECT_EQ(v.nodes, (std::vector<std::string>{"n3"}));
  EXPECT_NE(v.message.find("the controller lost contact with n3's agent"), std::string::npos)
      << v.message;
  EXPECT_NE(v.message.find("the node is up"), std::string::npos) << v.message;
  EXPECT_EQ(v.evidence["asked_again"], "answered");
}

TEST(NodeLostVerdict, ANodeThatFailedAFreshConnectionTooIsLostAndTheVerdictSaysBoth) {
  LostNode lost{"n3", "retests", 1020, 12250, "timeout: no probes"};
  lost.asked_again = true;
  lost.again = "unreachable: connecting again: no route to host";
  PortVerdict v = NodeLostVerdict(lost, {});
  EXPECT_EQ(v.kind, "node-lost");
  EXPECT_EQ(v.severity, Outcome::kFail);
  EXPECT_NE(v.message.find("a fresh connection to it failed too (unreachable: connecting again"),
            std::string::npos)
      << v.message;
  EXPECT_EQ(v.evidence["asked_again"], "unreachable: connecting again: no route to host");

  // Under Slurm there is no second connection: the verdict says so.
  LostNode unasked{"n3", "retests", 1020, 12250, "timeout: no probes"};
  unasked.again = "the slurm launcher cannot connect again";
  EXPECT_NE(NodeLostVerdict(unasked, {})
                .message.find("(not asked again: the slurm launcher cannot connect again)"),
            std::string::npos);
}

}  // namespace
}  // namespace cc
