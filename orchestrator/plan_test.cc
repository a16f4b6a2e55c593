#include "orchestrator/plan.h"

#include <gtest/gtest.h>

#include "build_paths.h"
#include "orchestrator/stages/stages.h"

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

Inventory Example() {
  auto inv = LoadInventory(std::string(CLUSTERCHECK_SOURCE_DIR) + "/inventories/example.toml", {});
  EXPECT_TRUE(inv.ok()) << inv.status().ToString();
  return inv.ok() ? *inv : Inventory{};
}

StagePlan PortsRow(const Inventory& inv) {
  for (const StagePlan& p : PlanStages(inv, inv.stages)) {
    if (p.stage == "ports") return p;
  }
  ADD_FAILURE() << "no ports row";
  return {};
}

TEST(Plan, TheExampleInventorysEstimateIsEachStagesOwn) {
  Inventory inv = Example();
  ASSERT_EQ(inv.stages.size(), 7u);
  const PlanInput in = PlanInputOf(inv);
  auto plan = PlanStages(inv, inv.stages);
  ASSERT_EQ(plan.size(), 8u);
  for (size_t i = 1; i < plan.size(); ++i) {
    const StageSpec* spec = FindStageSpec(plan[i].stage);
    ASSERT_NE(spec, nullptr) << plan[i].stage;
    StageEstimate own = spec->estimate(in);
    EXPECT_EQ(plan[i].work, own.work) << plan[i].stage;
    EXPECT_EQ(plan[i].estimate_s, own.seconds) << plan[i].stage;
  }
  // [stages.ports] ports = [22, 29500, "50000-50010"]: ssh once, 12 listed
  // and 8 ephemeral samples per ordered pair.
  EXPECT_EQ(PortsRow(inv).work, "240 ordered pairs x 21 ports = 5040 probes");
}

TEST(Plan, TheExampleInventorysEstimateFollowsThePortsList) {
  Inventory inv = Example();
  StagePlan before = PortsRow(inv);
  inv.stage_settings["ports"]["ports"] = {22, 29500, "50000-50099"};
  StagePlan after = PortsRow(inv);
  EXPECT_EQ(after.work, "240 ordered pairs x 110 ports = 26400 probes");
  EXPECT_GT(after.estimate_s, before.estimate_s);
}

TEST(Plan, TheExampleInventorysEstimateFollowsTheConnectsInFlight) {
  Inventory inv = Example();
  ASSERT_EQ(inv.stage_settings["ports"]["parallel"], 32);
  StagePlan before = PortsRow(inv);
  inv.stage_settings["ports"]["parallel"] = 1;
  StagePlan one_at_a_time = PortsRow(inv);
  EXPECT_EQ(one_at_a_time.work, before.work);
  EXPECT_GT(one_at_a_time.estimate_s, before.estimate_s);
  inv.stage_settings["ports"]["parallel"] = 256;
  EXPECT_LT(PortsRow(inv).estimate_s, before.estimate_s);
}

TEST(Plan, TheNcclEstimateLeavesOutThePhasesNotRun) {
  Inventory inv = Nodes(16);
  StagePlan all = PlanStages(inv, {"nccl"})[1];
  inv.stage_settings["nccl"] = {{"phases", {"intra"}}};
  StagePlan intra = PlanStages(inv, {"nccl"})[1];
  EXPECT_EQ(intra.work, "intra-node on 16 nodes");
  EXPECT_LT(intra.estimate_s, all.estimate_s);
}

TEST(Plan, AStageNameThatIsNoStageSaysSo) {
  auto plan = PlanStages(Nodes(2), {"nccl2"});
  EXPECT_EQ(plan[1].work, "unknown stage");
  EXPECT_EQ(plan[1].estimate_s, 0);
}

}  // namespace
}  // namespace cc
