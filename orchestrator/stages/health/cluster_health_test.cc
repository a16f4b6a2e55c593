#include "orchestrator/stages/health/cluster_health.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

using nlohmann::json;

json Port(const std::string& state, double rate) {
  return {{"device", "mlx5_0"}, {"port", 1},
          {"state", state},     {"phys_state", state == "ACTIVE" ? "LinkUp" : "Polling"},
          {"rate_gbps", rate},  {"rate", std::to_string(static_cast<int>(rate)) + " Gb/sec"}};
}

json Node(json port, json topology = json()) {
  json gpu = {{"status", "ok"},
              {"gpus", {{{"index", 0}, {"name", "H100"}}, {{"index", 1}, {"name", "H100"}}}}};
  if (!topology.is_null()) gpu["topology"] = topology;
  return {{"gpu", gpu}, {"ib", {{"status", "ok"}, {"ports", {port}}}}};
}

TEST(ClusterHealth, APortDownWhereOthersAreUpIsNamedNotOneDownEverywhere) {
  ClusterHealthInput in;
  in.health = {{"n1", Node(Port("ACTIVE", 400))},
               {"n2", Node(Port("ACTIVE", 400))},
               {"n3", Node(Port("DOWN", 0))}};
  auto out = JudgeCluster(in);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out["n3"].size(), 1u);
  EXPECT_EQ(out["n3"][0].check, "ib.mlx5_0/1.state");
  EXPECT_EQ(out["n3"][0].outcome, Outcome::kFail);

  in.health = {{"n1", Node(Port("DOWN", 0))},
               {"n2", Node(Port("DOWN", 0))},
               {"n3", Node(Port("ACTIVE", 400))}};
  EXPECT_TRUE(JudgeCluster(in).empty());  // not cabled anywhere: no accusation
}

TEST(ClusterHealth, ARateBelowTheMajorityOrThePinFails) {
  ClusterHealthInput in;
  in.health = {{"n1", Node(Port("ACTIVE", 400))},
               {"n2", Node(Port("ACTIVE", 400))},
               {"n3", Node(Port("ACTIVE", 200))}};
  auto out = JudgeCluster(in);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out["n3"][0].check, "ib.mlx5_0/1.rate");
  EXPECT_EQ(out["n3"][0].value, "200 Gb/s");
  in.expected_ib_rate_gbps = 800;
  EXPECT_EQ(JudgeCluster(in).size(), 3u);
}

TEST(ClusterHealth, LostNvLinkIsNamedByGpuPair) {
  json nv = json::array({json::array({"X", "NV18"}), json::array({"NV18", "X"})});
  json pcie = json::array({json::array({"X", "SYS"}), json::array({"SYS", "X"})});
  ClusterHealthInput in;
  in.health = {{"n1", Node(Port("ACTIVE", 400), nv)},
               {"n2", Node(Port("ACTIVE", 400), nv)},
               {"n3", Node(Port("ACTIVE", 400), pcie)}};
  auto out = JudgeCluster(in);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out["n3"][0].check, "topology");
  EXPECT_NE(out["n3"][0].message.find("GPU0-GPU1 SYS (majority NV18)"), std::string::npos)
      << out["n3"][0].message;
}

TEST(ClusterHealth, ANicAcrossTheSocketWarns) {
  auto facts = [](const std::string& level) {
    return json{
        {"network",
         {{"gpu_locality", {{{"gpu", 0}, {"nics", {{{"name", "mlx5_0"}, {"level", level}}}}}}}}}};
  };
  ClusterHealthInput in;
  in.facts = {{"n1", facts("PIX")}, {"n2", facts("PIX")}, {"n3", facts("SYS")}};
  auto out = JudgeCluster(in);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out["n3"][0].check, "gpu0.nic_locality");
  EXPECT_EQ(out["n3"][0].outcome, Outcome::kWarn);
}

TEST(ClusterHealth, AModeUnlikeTheMajorityWarns) {
  ClusterHealthInput in;
  for (const char* n : {"n1", "n2", "n3"}) {
    in.health[n] = {
        {"gpu",
         {{"status", "ok"},
          {"gpus",
           {{{"index", 0}, {"mig_mode", std::string(n) == "n2" ? "enabled" : "disabled"}}}}}}};
  }
  auto out = JudgeCluster(in);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out["n2"][0].check, "gpu.mig_mode");
  EXPECT_EQ(out["n2"][0].value, "enabled");
}

}  // namespace
}  // namespace cc
