#include "agent/facts_software.h"

#include <gtest/gtest.h>

#include "build_paths.h"

namespace cc::agent {
namespace {

using nlohmann::json;

const std::string kFixtures = CLUSTERCHECK_FIXTURES;

TEST(FactsSoftware, GlibcBannerGivesTheReleaseWithoutTheFullStop) {
  using std::string_literals::operator""s;
  std::string libc = "x\0GNU C Library (Debian GLIBC 2.36-9) stable release version 2.36.\n"s;
  EXPECT_EQ(ParseGlibcBanner(libc).value_or(""), "2.36");
  EXPECT_FALSE(ParseGlibcBanner("no banner").has_value());
}

TEST(FactsSoftware, GlibcOfAFixtureComesFromItsLibc) {
  json g = GlibcVersion(Sysroot(kFixtures + "/sysroot-gpu-node"));
  EXPECT_EQ(g["version"], "2.35");
  EXPECT_NE(g["source"].get<std::string>().find("libc.so.6"), std::string::npos);
  EXPECT_TRUE(GlibcVersion(Sysroot(kFixtures + "/sysroot-minimal"))["version"].is_null());
  EXPECT_TRUE(GlibcVersion(Sysroot("/"))["version"].is_string());
}

TEST(FactsSoftware, RdmaCoreVersionComesFromTheVerbsFileName) {
  EXPECT_EQ(RdmaCoreFromVerbsNames({"libc.so.6", "libibverbs.so.1", "libibverbs.so.1.14.50.0"})
                .value_or(""),
            "50.0");
  EXPECT_FALSE(RdmaCoreFromVerbsNames({"libibverbs.so.1", "libibverbs.so.1.0"}).has_value());
}

TEST(FactsSoftware, DpkgVersionNeedsAnInstalledPackage) {
  std::string status =
      "Package: rdma-core\nStatus: deinstall ok config-files\nVersion: 1:30.0-1\n\n"
      "Package: libibverbs1\nStatus: install ok installed\nVersion: 1:44.0-2\n";
  EXPECT_FALSE(DpkgVersion(status, "rdma-core").has_value());
  EXPECT_EQ(DpkgVersion(status, "libibverbs1").value_or(""), "44.0");
  EXPECT_FALSE(DpkgVersion(status, "absent").has_value());
}

TEST(FactsSoftware, OfedInfoDropsTheTrailingColon) {
  EXPECT_EQ(ParseOfedInfo("MLNX_OFED_LINUX-23.10-0.5.5.0:\n").value_or(""),
            "MLNX_OFED_LINUX-23.10-0.5.5.0");
  EXPECT_FALSE(ParseOfedInfo("  \n").has_value());
}

TEST(FactsSoftware, KernelVersionComparison) {
  EXPECT_TRUE(KernelAtLeast("5.15.0-105-generic", 5, 12));
  EXPECT_TRUE(KernelAtLeast("6.1.0", 5, 12));
  EXPECT_TRUE(KernelAtLeast("5.12.0", 5, 12));
  EXPECT_FALSE(KernelAtLeast("5.4.0-150-generic", 5, 12));
  EXPECT_FALSE(KernelAtLeast("4.18.0-513.el8.x86_64", 5, 12));
  EXPECT_FALSE(KernelAtLeast("garbage", 5, 12));
}

TEST(FactsSoftware, NvidiaDriverFlavorFromProc) {
  json open = ParseNvidiaDriverVersion(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build\n");
  EXPECT_EQ(open["version"], "550.54.15");
  EXPECT_EQ(open["flavor"], "open");
  json prop = ParseNvidiaDriverVersion(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n");
  EXPECT_EQ(prop["version"], "535.104.05");
  EXPECT_EQ(prop["flavor"], "proprietary");
  EXPECT_TRUE(ParseNvidiaDriverVersion("hello").is_null());
}

TEST(FactsSoftware, SysfsEnumPrefixIsStripped) {
  EXPECT_EQ(StripSysfsEnumPrefix("4: ACTIVE"), "ACTIVE");
  EXPECT_EQ(StripSysfsEnumPrefix("InfiniBand"), "InfiniBand");
  EXPECT_EQ(StripSysfsEnumPrefix("a: b"), "a: b");
}

TEST(FactsSoftware, GpuNodeFixtureRdma) {
  json r = CollectRdmaFacts(Sysroot(kFixtures + "/sysroot-gpu-node"));
  ASSERT_EQ(r["ib_devices"].size(), 2u);
  const json& mlx0 = r["ib_devices"][0];
  EXPECT_EQ(mlx0["name"], "mlx5_0");
  ASSERT_EQ(mlx0["ports"].size(), 1u);
  EXPECT_EQ(mlx0["ports"][0]["port"], 1);
  EXPECT_EQ(mlx0["ports"][0]["state"], "ACTIVE");
  EXPECT_EQ(mlx0["ports"][0]["rate"], "400 Gb/sec (4X NDR)");
  EXPECT_EQ(mlx0["ports"][0]["link_layer"], "InfiniBand");
  EXPECT_EQ(mlx0["netdevs"], json({"ib0"}));
  EXPECT_EQ(r["ib_devices"][1]["ports"][0]["state"], "DOWN");
  EXPECT_EQ(r["ib_devices"][1]["ports"][0]["link_layer"], "Ethernet");
  EXPECT_EQ(r["rdma_core_version"], "39.0");
  EXPECT_EQ(r["ofed_version"], "23.10-1.1.9");
  EXPECT_EQ(r["nvidia_peermem"], true);
  EXPECT_EQ(r["nvidia_driver"]["version"], "550.54.15");
  EXPECT_EQ(r["dmabuf_possible"], true);
}

TEST(FactsSoftware, MinimalFixtureRdmaIsEmptyWithReasons) {
  json r = CollectRdmaFacts(Sysroot(kFixtures + "/sysroot-minimal"));
  EXPECT_TRUE(r["ib_devices"].empty());
  EXPECT_TRUE(r["rdma_core_version"].is_null());
  EXPECT_FALSE(r["rdma_core_source"].get<std::string>().empty());
  EXPECT_TRUE(r["ofed_version"].is_null());
  EXPECT_EQ(r["nvidia_peermem"], false);
  EXPECT_EQ(r["dmabuf_possible"], false);
  EXPECT_NE(r["dmabuf_reason"].get<std::string>().find("NVIDIA"), std::string::npos);
}

TEST(FactsSoftware, OmpiInfoVersionLine) {
  EXPECT_EQ(ParseOmpiInfoVersion("package:x\nompi:version:full:4.1.6\nompi:version:repo:v4.1.6\n")
                .value_or(""),
            "4.1.6");
  EXPECT_FALSE(ParseOmpiInfoVersion("mpich\n").has_value());
}

TEST(FactsSoftware, MpiIsSkippedOnAFixtureRoot) {
  json m = CollectMpiFacts(Sysroot(kFixtures + "/sysroot-minimal"));
  EXPECT_EQ(m["status"], "skip");
  EXPECT_TRUE(m["openmpi_version"].is_null());
}

TEST(FactsSoftware, MpiOnTheRealRootIsAVersionOrAReason) {
  json m = CollectMpiFacts(Sysroot("/"));
  if (m["status"] == "ok") {
    EXPECT_TRUE(m["openmpi_version"].is_string());
  } else {
    EXPECT_TRUE(m["openmpi_version"].is_null());
    EXPECT_FALSE(m["reason"].get<std::string>().empty());
  }
}

TEST(FactsSoftware, TorchWithoutPythonIsSkipped) {
  json t = CollectTorchFacts(Sysroot("/"), "");
  EXPECT_EQ(t["status"], "skip");
  EXPECT_EQ(t["reason"], "no python given for this node");
}

TEST(FactsSoftware, TorchWithAMissingPythonIsAbsent) {
  json t = CollectTorchFacts(Sysroot("/"), "/nonexistent/bin/python3");
  EXPECT_EQ(t["status"], "absent");
  EXPECT_NE(t["reason"].get<std::string>().find("/nonexistent/bin/python3"), std::string::npos);
}

TEST(FactsSoftware, TorchProbeOutputIsReadFromItsLastJsonLine) {
  ExecResult run;
  run.started = true;
  run.exit_code = 0;
  run.out =
      "some warning\n{\"version\":\"2.4.0\",\"cuda\":\"12.4\",\"cuda_available\":true,"
      "\"device_count\":8,\"nccl\":\"2.20.5\"}\n";
  json t = TorchFactsFromRun("python3", run);
  EXPECT_EQ(t["status"], "ok");
  EXPECT_EQ(t["version"], "2.4.0");
  EXPECT_EQ(t["device_count"], 8);
  EXPECT_EQ(t["nccl"], "2.20.5");

  run.out = "{\"import_error\":\"ModuleNotFoundError: No module named 'torch'\"}\n";
  EXPECT_EQ(TorchFactsFromRun("python3", run)["status"], "absent");
  run.out = "";
  run.exit_code = 1;
  run.err = "Traceback ...\nSyntaxError";
  json bad = TorchFactsFromRun("python3", run);
  EXPECT_EQ(bad["status"], "error");
  EXPECT_NE(bad["reason"].get<std::string>().find("SyntaxError"), std::string::npos);
  run.timed_out = true;
  EXPECT_NE(TorchFactsFromRun("python3", run)["reason"].get<std::string>().find("20 s"),
            std::string::npos);
}

TEST(FactsSoftware, TorchProbeRunsUnderARealPython) {
  json t = CollectTorchFacts(Sysroot("/"), "python3");
  // This machine may or may not have torch; either way a clean finding.
  EXPECT_TRUE(t["status"] == "ok" || t["status"] == "absent") << t.dump();
}

}  // namespace
}  // namespace cc::agent
