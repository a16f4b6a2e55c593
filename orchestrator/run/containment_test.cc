#include "orchestrator/run/containment.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

Verdict NodeCause(const std::string& node) {
  Verdict v;
  v.kind = "link-down";
  v.stage = "nics";
  v.nodes = {node};
  v.summary = node + ": eth0 is down";
  v.cause = CauseScope::kNode;
  return v;
}

TEST(Containment, ANodeCauseLeavesItsNodeOutAndSaysWhy) {
  Containment c;
  c.Add(NodeCause("n3"));
  EXPECT_EQ(c.Remaining({"n1", "n2", "n3", "n4"}), (std::vector<std::string>{"n1", "n2", "n4"}));
  EXPECT_EQ(c.Contained({"n1", "n3"}), (std::vector<std::string>{"n3"}));
  EXPECT_EQ(c.WhyNode("n3"), "n3: eth0 is down (nics link-down)");
  EXPECT_EQ(c.WhyNode("n1"), "");
  EXPECT_EQ(c.WhyPair("n1", "n3"), "n3: eth0 is down (nics link-down)");
  EXPECT_EQ(c.WhyPair("n1", "n2"), "");
  EXPECT_EQ(NotTestedBecause(c.WhyNode("n3")), "not tested: n3: eth0 is down (nics link-down)");
}

TEST(Containment, ALinkCauseLeavesOnlyItsPairOutEitherWayRound) {
  Containment c;
  Verdict v;
  v.kind = "firewall";
  v.stage = "ports";
  v.pairs = {{"n2", "n5"}};
  v.nodes = {"n2", "n5"};
  v.summary = "n5 drops new tcp from n2";
  v.cause = CauseScope::kLink;
  c.Add(v);
  EXPECT_EQ(c.Remaining({"n2", "n5"}), (std::vector<std::string>{"n2", "n5"}));
  EXPECT_NE(c.WhyPair("n5", "n2"), "");
  EXPECT_EQ(c.WhyPair("n2", "n3"), "");
  EXPECT_EQ(c.LinksAmong({"n1", "n2", "n5"}),
            (std::vector<std::pair<std::string, std::string>>{{"n2", "n5"}}));
  EXPECT_TRUE(c.LinksAmong({"n1", "n2"}).empty());
}

TEST(Containment, AJobLeavesOutCausedNodesAndTheReceivingEndOfACausedLink) {
  Containment c;
  c.Add(NodeCause("n3"));
  Verdict oneway;
  oneway.kind = "one-way";
  oneway.stage = "ports";
  oneway.pairs = {{"n6", "n2"}};  // n6 -> n2 fails: n2's firewall
  oneway.summary = "n2 drops new tcp from n6";
  oneway.cause = CauseScope::kLink;
  c.Add(oneway);
  std::map<std::string, std::string> left_out;
  auto job = c.JobNodes({"n1", "n2", "n3", "n4", "n5", "n6"}, &left_out);
  EXPECT_EQ(job, (std::vector<std::string>{"n1", "n4", "n5", "n6"}));
  ASSERT_EQ(left_out.size(), 2u);
  EXPECT_EQ(left_out["n2"], "n2 drops new tcp from n6 (ports one-way)");
  // A link whose other end is out anyway leaves nothing more out.
  left_out.clear();
  EXPECT_EQ(c.JobNodes({"n2", "n4"}, &left_out), (std::vector<std::string>{"n2", "n4"}));
  EXPECT_TRUE(left_out.empty());
}

TEST(Containment, ContainedResultsAreSkipsThatSayWhy) {
  auto skips = ContainedResults("mpi", {{"n3", "n3: eth0 is down (nics link-down)"}}, {"n1", "n2"},
                                {"launch"}, {"latency", "bandwidth"});
  ASSERT_EQ(skips.nodes.size(), 1u);
  EXPECT_EQ(skips.nodes[0].outcome, Outcome::kSkip);
  EXPECT_EQ(skips.nodes[0].message, "not tested: n3: eth0 is down (nics link-down)");
  ASSERT_EQ(skips.pairs.size(), 4u);
  for (const auto& p : skips.pairs) {
    EXPECT_EQ(p.outcome, Outcome::kSkip);
    EXPECT_EQ(p.src, "n3");
    EXPECT_EQ(p.evidence["contained"], "n3: eth0 is down (nics link-down)");
  }
}

TEST(Containment, AVerdictThatIsNoCauseContainsNothing) {
  Containment c;
  Verdict v = NodeCause("n3");
  v.cause = CauseScope::kNone;
  c.Add(v);
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.Remaining({"n3"}), (std::vector<std::string>{"n3"}));
}

}  // namespace
}  // namespace cc
