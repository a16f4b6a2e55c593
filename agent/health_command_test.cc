// The `health` command: in process against a fixture sysroot, and as the
// real agent binary over its protocol with the fake NVML of tests/fakes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/command_testing.h"
#include "agent/commands_decl.h"
#include "agent/facts_exec.h"
#include "build_paths.h"

namespace cc::agent {
namespace {

namespace fs = std::filesystem;
using testing::ScriptedContext;

const std::string kFixtures = CLUSTERCHECK_FIXTURES;
const std::string kAfter = kFixtures + "/sysroot-health/after";

Json RunOn(const std::string& root, const Json& args, Status* status) {
  ScriptedContext ctx;
  ctx.root_ = root;
  *status = RunHealth(args, ctx);
  return status->ok() ? ctx.WaitResult("health") : Json();
}

TEST(HealthCommand, ReportsEverySectionOfAFixtureNode) {
  Status status;
  Json h = RunOn(kAfter, {{"nvml_candidates", {"/nonexistent/libnvidia-ml.so.1"}}}, &status);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(h.size(), 3u) << h.dump();
  EXPECT_EQ(h["gpu"]["status"], "absent");
  EXPECT_NE(h["gpu"]["reason"].get<std::string>().find("libnvidia-ml.so.1"), std::string::npos);
  EXPECT_EQ(h["kernel_log"]["status"], "ok");
  EXPECT_EQ(h["kernel_log"]["source"], "/dev/kmsg");
  EXPECT_EQ(h["kernel_log"]["events"].size(), 23u);
  EXPECT_EQ(h["ib"]["status"], "ok");
  EXPECT_EQ(h["ib"]["ports"].size(), 2u);
  EXPECT_EQ(h["ib"]["ports"][0]["counters"]["link_downed"], 3);
}

TEST(HealthCommand, TheSecondSnapshotAsksForIbAlone) {
  Status status;
  Json h = RunOn(kFixtures + "/sysroot-health/before", {{"sections", {"ib"}}}, &status);
  ASSERT_TRUE(status.ok()) << status.ToString();
  ASSERT_EQ(h.size(), 1u) << h.dump();
  EXPECT_EQ(h["ib"]["ports"][0]["counters"]["link_downed"], 0);
}

TEST(HealthCommand, SinceIsPassedToTheKernelLog) {
  Status status;
  Json h = RunOn(kAfter, {{"sections", {"kernel_log"}}, {"since_s", 1764700000 + 1000}}, &status);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(h["kernel_log"]["since_s"], 1764701000);
  EXPECT_EQ(h["kernel_log"]["events"].size(), 13u);
}

TEST(HealthCommand, BadArgumentsAreRefusedNamingTheField) {
  Status status;
  RunOn(kAfter, {{"sections", {"gpu", "disks"}}}, &status);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("disks"), std::string::npos);
  RunOn(kAfter, {{"since_s", "yesterday"}}, &status);
  EXPECT_NE(status.message().find("since_s"), std::string::npos);
  RunOn(kAfter, {{"library_paths", "/usr/lib"}}, &status);
  EXPECT_NE(status.message().find("library_paths"), std::string::npos);
  RunOn(kAfter, Json::array(), &status);
  EXPECT_FALSE(status.ok());
}

// The agent binary answers one request on stdin; returns the data of its
// "health" result, null when there was none.
Json AgentHealth(const std::string& dir, const Json& args) {
  std::string request = dir + "/request.json";
  std::ofstream(request) << Json{{"v", 1}, {"id", 1}, {"cmd", "health"}, {"args", args}}.dump()
                         << "\n";
  std::string agent = CLUSTERCHECK_BINARY_DIR "/clustercheck-agent";
  ExecResult r = RunProgram({"/bin/sh", "-c", "exec '" + agent + "' < '" + request + "'"},
                            Deadline::InSeconds(60));
  EXPECT_EQ(r.exit_code, 0) << r.error << r.err;
  std::istringstream out(r.out);
  std::string line;
  while (std::getline(out, line)) {
    Json m = Json::parse(line, nullptr, false);
    if (m.is_object() && m.value("type", "") == "result" && m.value("name", "") == "health") {
      return m["data"];
    }
  }
  ADD_FAILURE() << "no health result in: " << r.out << r.err;
  return Json();
}

TEST(HealthCommand, TheAgentWithTheFakeNvmlReportsGpuThreeDegraded) {
  const std::string fake = CLUSTERCHECK_BINARY_DIR "/fakes/libnvidia-ml.so.1";
  ASSERT_TRUE(fs::exists(fake)) << "build the fakes: " << fake;
  char tmpl[] = "/tmp/cc-health-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  // A node folder as the inventory's library_paths names it: the fake
  // finds fake_gpu.conf beside the symlink.
  fs::create_symlink(fake, dir + "/libnvidia-ml.so.1");
  std::ofstream(dir + "/fake_gpu.conf") << "gpu_count = 8\npcie_width.3 = 8\npcie_gen.3 = 4\n"
                                           "ecc_volatile_uncorrected.3 = 2\nnvlinks = 18\n"
                                           "fabric_state = 3\nclock_sm_mhz.3 = 1410\n"
                                           "clock_mem_mhz.5 = -1\n";
  Json h = AgentHealth(dir, {{"library_paths", {dir}}, {"sections", {"gpu"}}});
  fs::remove_all(dir);
  const Json& gpu = h["gpu"];
  ASSERT_EQ(gpu["status"], "ok") << h.dump();
  ASSERT_EQ(gpu["gpus"].size(), 8u);
  for (const Json& g : gpu["gpus"]) {
    bool three = g["index"] == 3;
    EXPECT_EQ(g["pcie"]["width"], three ? 8 : 16) << g.dump();
    EXPECT_EQ(g["pcie"]["gen"], three ? 4 : 5);
    EXPECT_EQ(g["pcie"]["max_width"], 16);
    EXPECT_EQ(g["ecc"]["volatile_uncorrected"], three ? 2 : 0);
    EXPECT_EQ(g["clock_event_reasons"], 1);
    EXPECT_EQ(g["temperature_c"], 40);
    EXPECT_EQ(g["clocks_mhz"]["sm"], three ? 1410 : 1980);
    EXPECT_EQ(g["clocks_mhz"]["sm_max"], 1980);
    if (g["index"] == 5) {
      EXPECT_TRUE(g["clocks_mhz"]["mem"].is_null()) << "NOT_SUPPORTED";
    } else {
      EXPECT_EQ(g["clocks_mhz"]["mem"], 2619);
    }
    EXPECT_DOUBLE_EQ(g["power_w"].get<double>(), 100.0);
    EXPECT_EQ(g["mig_mode"], "disabled");
    EXPECT_EQ(g["fabric_state"], "completed");
    EXPECT_EQ(g["fabric_status"], "Success");
    ASSERT_EQ(g["nvlinks"].size(), 18u);
    EXPECT_EQ(g["nvlinks"][17]["errors"]["crc_data"], 0);
  }
  EXPECT_EQ(gpu["gpus"][3]["bus_id"], "0000:5d:00.0");
  EXPECT_EQ(gpu["topology"][0][7], "NV18");
}

}  // namespace
}  // namespace cc::agent
