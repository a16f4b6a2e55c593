#include "orchestrator/stages/health/node_health.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace cc {
namespace {

using nlohmann::json;

// The H200's readings (shared/fixtures/health/smi_csv.txt): gen 5 x16 of
// 5 x16, reasons 0x1 (idle), no ECC, no remap, 44 C, 121.05 W.
json H200Gpu() {
  return {{"index", 0},
          {"bus_id", "0000:00:06.0"},
          {"name", "NVIDIA H200"},
          {"pcie",
           {{"gen", 5},
            {"max_gen", 5},
            {"width", 16},
            {"max_width", 16},
            {"sysfs", {{"width", 16}, {"max_width", 16}}}}},
          {"ecc", {{"mode", "enabled"}, {"volatile_uncorrected", 0}, {"aggregate_uncorrected", 0}}},
          {"retired_pages_pending", false},
          {"remapped_rows",
           {{"pending", false}, {"failure", false}, {"correctable", 0}, {"uncorrectable", 0}}},
          {"clock_event_reasons", 1},
          {"temperature_c", 44},
          {"power_w", 121.05},
          {"nvlinks", json::array()},
          {"fabric_state", "not-supported"}};
}

json Section(std::vector<json> gpus) {
  return {{"status", "ok"}, {"count", gpus.size()}, {"gpus", gpus}};
}

TEST(NodeHealth, TheHealthyH200PassesWithOneFinding) {
  auto fs = JudgeGpus(Section({H200Gpu()}), 1);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].check, "gpu");
  EXPECT_EQ(fs[0].outcome, Outcome::kPass);
}

TEST(NodeHealth, ANarrowLinkFailsNamingGpuBusAndBothValues) {
  json g = H200Gpu();
  g["pcie"]["width"] = 8;
  g["pcie"]["sysfs"]["width"] = 8;
  auto fs = JudgeGpus(Section({g}), 1);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].check, "gpu0.pcie");
  EXPECT_EQ(fs[0].outcome, Outcome::kFail);
  EXPECT_EQ(fs[0].value, "gen 5 x8");
  EXPECT_EQ(fs[0].expected, "gen 5 x16");
  EXPECT_NE(fs[0].message.find("0000:00:06.0"), std::string::npos) << fs[0].message;
}

TEST(NodeHealth, ASlowerGenerationWhileIdleOnlyWarns) {
  json g = H200Gpu();
  g["pcie"]["gen"] = 1;
  auto idle = JudgeGpus(Section({g}), 1);
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0].outcome, Outcome::kWarn);
  g["clock_event_reasons"] = 0;  // busy
  auto busy = JudgeGpus(Section({g}), 1);
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_EQ(busy[0].outcome, Outcome::kFail);
}

TEST(NodeHealth, NvmlAndSysfsDisagreeingIsNamed) {
  json g = H200Gpu();
  g["pcie"]["sysfs"]["width"] = 8;
  auto fs = JudgeGpus(Section({g}), 1);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].check, "gpu0.pcie_sysfs");
  EXPECT_EQ(fs[0].outcome, Outcome::kWarn);
}

TEST(NodeHealth, RemapsAndEccTakeTheirActions) {
  json pending = H200Gpu();
  pending["remapped_rows"]["pending"] = true;
  auto p = JudgeGpus(Section({pending}), 1);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].action, HealthAction::kResetGpu);
  EXPECT_EQ(p[0].outcome, Outcome::kFail);
  json failed = H200Gpu();
  failed["remapped_rows"]["failure"] = true;
  EXPECT_EQ(JudgeGpus(Section({failed}), 1)[0].action, HealthAction::kDrain);
  json ecc = H200Gpu();
  ecc["ecc"]["volatile_uncorrected"] = 2;
  EXPECT_EQ(JudgeGpus(Section({ecc}), 1)[0].check, "gpu0.ecc");
  EXPECT_EQ(JudgeGpus(Section({ecc}), 1)[0].action, HealthAction::kResetGpu);
}

TEST(NodeHealth, HardwareSlowdownFailsSoftwarePowerCapWarns) {
  json hw = H200Gpu();
  hw["clock_event_reasons"] = kClockReasonHwThermal;
  auto h = JudgeGpus(Section({hw}), 1);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].outcome, Outcome::kFail);
  EXPECT_NE(h[0].message.find("HW thermal"), std::string::npos);
  json sw = H200Gpu();
  sw["clock_event_reasons"] = kClockReasonSwPowerCap;
  EXPECT_EQ(JudgeGpus(Section({sw}), 1)[0].outcome, Outcome::kWarn);
}

TEST(NodeHealth, MissingGpusAndDownLinksAndFabric) {
  auto count = JudgeGpus(Section({H200Gpu()}), 8);
  ASSERT_FALSE(count.empty());
  EXPECT_EQ(count[0].check, "gpu.count");
  EXPECT_EQ(count[0].action, HealthAction::kReboot);
  json nv = H200Gpu();
  nv["nvlinks"] = {{{"link", 0}, {"active", true}}, {{"link", 1}, {"active", false}}};
  EXPECT_EQ(JudgeGpus(Section({nv}), 1)[0].check, "gpu0.nvlink");
  json fm = H200Gpu();
  fm["fabric_state"] = "not-started";
  EXPECT_EQ(JudgeGpus(Section({fm}), 1)[0].check, "gpu0.fabric");
}

TEST(NodeHealth, NoGpuIsASkipWithTheReason) {
  auto fs = JudgeGpus({{"status", "absent"}, {"reason", "libnvidia-ml.so.1 not found"}}, {});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].outcome, Outcome::kSkip);
  EXPECT_NE(fs[0].message.find("libnvidia-ml.so.1 not found"), std::string::npos);
}

TEST(NodeHealth, EachXidIsOneFindingWithItsAction) {
  json log = {{"status", "ok"},
              {"source", "/dev/kmsg"},
              {"lines", 900},
              {"events",
               {{{"kind", "Xid"},
                 {"code", 79},
                 {"device", "PCI:0000:18:00"},
                 {"text", "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus."}},
                {{"kind", "Xid"},
                 {"code", 79},
                 {"device", "PCI:0000:18:00"},
                 {"text", "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus."}},
                {{"kind", "Xid"}, {"code", 45}, {"device", "PCI:0000:18:00"}, {"text", "45"}}}}};
  auto fs = JudgeKernelLog(log);
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(fs[0].check, "xid.45");
  EXPECT_EQ(fs[0].outcome, Outcome::kPass);
  EXPECT_EQ(fs[1].check, "xid.79");
  EXPECT_EQ(fs[1].action, HealthAction::kReboot);
  EXPECT_EQ(fs[1].evidence["count"], 2);
}

TEST(NodeHealth, ACleanLogSaysHowManyLinesItRead) {
  auto fs = JudgeKernelLog(
      {{"status", "ok"}, {"source", "dmesg"}, {"lines", 5}, {"events", json::array()}});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].outcome, Outcome::kPass);
  EXPECT_EQ(fs[0].message, "no Xid in 5 lines of dmesg");
  auto skip = JudgeKernelLog({{"status", "skip"}, {"reason", "/dev/kmsg: Permission denied"}});
  EXPECT_EQ(skip[0].outcome, Outcome::kSkip);
}

TEST(NodeHealth, AnActivePortWithoutItsVerbsDeviceFails) {
  json ib = {{"status", "ok"},
             {"ports",
              {{{"device", "mlx5_0"},
                {"port", 1},
                {"state", "ACTIVE"},
                {"uverbs", "uverbs0"},
                {"uverbs_present", false}},
               {{"device", "mlx5_1"},
                {"port", 1},
                {"state", "ACTIVE"},
                {"uverbs", nullptr},
                {"uverbs_present", nullptr}}}}};
  auto fs = JudgeIbPortsAlone(ib);
  ASSERT_EQ(fs.size(), 1u);  // no verbs name: nothing to judge, no alarm
  EXPECT_EQ(fs[0].check, "ib.mlx5_0/1.uverbs");
  EXPECT_EQ(JudgeIbPortsAlone({{"status", "absent"}})[0].outcome, Outcome::kSkip);
  // The H200 machine: /sys/class/infiniband there, but no port in it.
  EXPECT_EQ(JudgeIbPortsAlone({{"status", "ok"}, {"ports", json::array()}})[0].outcome,
            Outcome::kSkip);
}

}  // namespace
}  // namespace cc
