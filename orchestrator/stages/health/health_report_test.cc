#include "orchestrator/stages/health/health_report.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

using nlohmann::json;

NodeResult Readings(const std::string& node, const std::string& action, json topology) {
  json gpus = {{{"index", 0},
                {"pcie", {5, action == "drain" ? 8 : 16, 5, 16}},
                {"temperature_c", 44},
                {"power_w", 121.05}}};
  return NodeCheck("health", node, "readings", Outcome::kPass, "hardware readings",
                   {{"action", action},
                    {"gpu_status", "ok"},
                    {"gpus", gpus},
                    {"topology", topology},
                    {"kernel_log", {{"status", "ok"}, {"lines", 10}, {"events", 0}}},
                    {"ib_ports", json::array()}},
                   action);
}

TEST(HealthReport, OneRowPerNodeWorstActionFirstAndMatricesFolded) {
  json nv = json::array({json::array({"X", "NV18"}), json::array({"NV18", "X"})});
  json pcie = json::array({json::array({"X", "SYS"}), json::array({"SYS", "X"})});
  RunData d;
  d.node_results = {Readings("n1", "ok", nv), Readings("n2", "ok", nv),
                    Readings("n3", "drain", pcie)};
  auto t = HealthReportTable(d);
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->rows.size(), 3u);
  EXPECT_EQ(t->rows[0].cells[0], "n3");
  EXPECT_EQ(t->rows[0].cells[1], "drain");
  EXPECT_EQ(t->rows[0].outcome, Outcome::kFail);
  EXPECT_EQ(t->rows[0].cells[3], "gen5 x8 (1 below max)");
  EXPECT_EQ(t->rows[1].cells[3], "gen5 x16");
  ASSERT_EQ(t->blocks.size(), 2u);
  EXPECT_EQ(t->blocks[0].first, "GPU topology of n[1-2]");
  EXPECT_NE(t->blocks[0].second.find("NV18"), std::string::npos);
}

TEST(HealthReport, NoHealthResultsNoTable) {
  EXPECT_FALSE(HealthReportTable(RunData{}).has_value());
}

TEST(HealthReport, TopologyTextLooksLikeNvidiaSmi) {
  EXPECT_EQ(TopologyText(json::array({json::array({"X", "NV18"}), json::array({"NV18", "X"})})),
            "      GPU0   GPU1   \nGPU0  X      NV18   \nGPU1  NV18   X      \n");
}

}  // namespace
}  // namespace cc
