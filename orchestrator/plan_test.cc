#include "orchestrator/plan.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

Inventory Nodes(int n) {
  Inventory inv;
  inv.name = "pod-a";
  for (int i = 1; i <= n; ++i) {
    Node node;
    node.name = "gpu" + std::to_string(100 + i).substr(1);
    inv.nodes.push_back(node);
  }
  return inv;
}

TEST(Plan, PairStagesListPairsAndRoundsByTheCircleMethod) {
  auto plan = PlanStages(Nodes(16), {"facts", "nccl", "mpi"});
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[0].stage, "connect");
  EXPECT_EQ(plan[2].work, "intra-node on 16 nodes, 120 pairs in 15 rounds of 8, then all 16");
  EXPECT_EQ(plan[3].work, "one mpirun: MPI_Allreduce, then ping-pong 120 pairs in 15 rounds of 8");
  EXPECT_GT(plan[2].estimate_s, plan[1].estimate_s);
}

TEST(Plan, AnOddClusterHasABye) {
  auto plan = PlanStages(Nodes(5), {"mpi"});
  EXPECT_EQ(plan[1].work, "one mpirun: MPI_Allreduce, then ping-pong 10 pairs in 5 rounds of 2");
}

TEST(Plan, PortsCountRangesInFull) {
  Inventory inv = Nodes(4);
  inv.stage_settings["ports"] = {{"ports", {22, 29500, "60000-60009"}}, {"ephemeral_samples", 4}};
  auto plan = PlanStages(inv, {"ports"});
  EXPECT_EQ(plan[1].work, "12 ordered pairs x 16 ports = 192 probes");
}

TEST(Plan, ThePortsEstimateFollowsTheStagesOwnSettings) {
  Inventory inv = Nodes(32);
  auto estimate = [&](const nlohmann::json& settings) {
    inv.stage_settings["ports"] = settings;
    return PlanStages(inv, {"ports"})[1];
  };
  StagePlan base = estimate(nlohmann::json::object());
  // Defaults: 29500, ssh and 8 ephemeral samples.
  EXPECT_EQ(base.work, "992 ordered pairs x 10 ports = 9920 probes");
  StagePlan more_ports = estimate({{"ports", {29500, "60000-60099"}}});
  EXPECT_EQ(more_ports.work, "992 ordered pairs x 110 ports = 109120 probes");
  EXPECT_GT(more_ports.estimate_s, base.estimate_s);
  // Fewer senders per receiver: more batches, each an agent round trip.
  StagePlan narrow = estimate({{"senders_per_receiver", 2}});
  EXPECT_EQ(narrow.work, base.work);
  EXPECT_GT(narrow.estimate_s, base.estimate_s);
  StagePlan wide = estimate({{"senders_per_receiver", 32}});
  EXPECT_LT(wide.estimate_s, base.estimate_s);
}

TEST(Plan, ConnectWavesFollowTheFanout) {
  PlanOptions o;
  o.fanout = 4;
  auto plan = PlanStages(Nodes(10), {}, o);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].work, "10 nodes (3 waves of up to 4)");
}

TEST(Plan, DescribeEndsWithATotal) {
  std::string s = DescribePlan(Nodes(2), {"facts", "parity"});
  EXPECT_EQ(s.rfind("plan for pod-a: 2 nodes, 3 stages", 0), 0u) << s;
  EXPECT_NE(s.find("  total ~"), std::string::npos) << s;
}

TEST(Plan, DurationsReadAsPeopleSayThem) {
  EXPECT_EQ(FormatDuration(0.2), "<1 s");
  EXPECT_EQ(FormatDuration(45), "45 s");
  EXPECT_EQ(FormatDuration(150), "2.5 min");
  EXPECT_EQ(FormatDuration(7200), "2.0 h");
}

}  // namespace
}  // namespace cc
