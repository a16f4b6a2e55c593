#include "agent/facts_system.h"

#include <gtest/gtest.h>

#include "build_paths.h"

namespace cc::agent {
namespace {

const std::string kFixtures = CLUSTERCHECK_FIXTURES;

TEST(FactsSystem, OsReleaseValuesAreUnquoted) {
  auto kv = ParseOsRelease("ID=ubuntu\nVERSION_ID=\"22.04\"\n# c\nPRETTY_NAME='A \\\"b\\\"'\n");
  EXPECT_EQ(kv["ID"], "ubuntu");
  EXPECT_EQ(kv["VERSION_ID"], "22.04");
  EXPECT_EQ(kv["PRETTY_NAME"], "A \"b\"");
}

TEST(FactsSystem, CpuinfoWithoutTopologyCountsOneSocketAndThreadsAsCores) {
  CpuSummary c = ParseCpuInfo("processor : 0\nmodel name : X\n\nprocessor : 1\nmodel name : X\n");
  EXPECT_EQ(c.model, "X");
  EXPECT_EQ(c.sockets, 1);
  EXPECT_EQ(c.cores, 2);
  EXPECT_EQ(c.threads, 2);
}

TEST(FactsSystem, Arm64CpuinfoFallsBackToTheModelLine) {
  CpuSummary c = ParseCpuInfo("processor : 0\nBogoMIPS : 50\nModel : Neoverse-V2\n");
  EXPECT_EQ(c.model, "Neoverse-V2");
  EXPECT_EQ(c.threads, 1);
}

TEST(FactsSystem, MemTotalIsInBytes) {
  EXPECT_EQ(ParseMemTotalBytes("MemFree: 1 kB\nMemTotal:  2048 kB\n").value_or(0), 2048 * 1024);
  EXPECT_FALSE(ParseMemTotalBytes("MemFree: 1 kB\n").has_value());
}

TEST(FactsSystem, MemlockIsTheSoftLimit) {
  EXPECT_EQ(ParseMemlockFromLimits("Max locked memory  65536  unlimited  bytes\n"), 65536);
  EXPECT_EQ(ParseMemlockFromLimits("Max locked memory  unlimited  unlimited  bytes\n"),
            "unlimited");
  EXPECT_TRUE(ParseMemlockFromLimits("Max open files 1 1 files\n").is_null());
}

TEST(FactsSystem, GpuNodeFixtureGivesItsValues) {
  auto s = CollectSystemFacts(Sysroot(kFixtures + "/sysroot-gpu-node"));
  EXPECT_EQ(s["hostname"], "dgx-a01");
  EXPECT_EQ(s["os"]["id"], "ubuntu");
  EXPECT_EQ(s["os"]["version_id"], "22.04");
  EXPECT_EQ(s["os"]["pretty_name"], "Ubuntu 22.04.4 LTS");
  EXPECT_EQ(s["kernel"], "5.15.0-105-generic");
  EXPECT_EQ(s["glibc"], "2.35");
  EXPECT_EQ(s["arch"], "x86_64");
  EXPECT_EQ(s["cpu"]["model"], "Intel(R) Xeon(R) Platinum 8480C");
  EXPECT_EQ(s["cpu"]["sockets"], 2);
  EXPECT_EQ(s["cpu"]["cores"], 4);
  EXPECT_EQ(s["cpu"]["threads"], 8);
  EXPECT_EQ(s["memory_bytes"], 2113663372LL * 1024);
  EXPECT_TRUE(s["shm_bytes"].is_number());
  EXPECT_GT(s["shm_bytes"].get<long long>(), 0);
  EXPECT_EQ(s["memlock"], "unlimited");
}

TEST(FactsSystem, MinimalFixtureReportsWhatIsMissingWithReasons) {
  auto s = CollectSystemFacts(Sysroot(kFixtures + "/sysroot-minimal"));
  EXPECT_EQ(s["os"]["id"], "debian");
  EXPECT_EQ(s["kernel"], "6.1.0-18-amd64");
  EXPECT_EQ(s["cpu"]["sockets"], 1);
  EXPECT_EQ(s["cpu"]["threads"], 2);
  EXPECT_EQ(s["memory_bytes"], 4026532LL * 1024);
  EXPECT_TRUE(s["shm_bytes"].is_null());
  EXPECT_NE(s["shm_bytes_reason"].get<std::string>().find("/dev/shm"), std::string::npos);
  EXPECT_TRUE(s["memlock"].is_null());
  EXPECT_TRUE(s.contains("memlock_reason"));
  EXPECT_TRUE(s["glibc"].is_null());
}

TEST(FactsSystem, AMissingRootGivesNullsNotACrash) {
  auto s = CollectSystemFacts(Sysroot("/nonexistent-clustercheck-root"));
  EXPECT_TRUE(s["kernel"].is_null());
  EXPECT_TRUE(s["memory_bytes"].is_null());
  EXPECT_TRUE(s["os"]["id"].is_null());
  EXPECT_TRUE(s["os"].contains("reason"));
}

TEST(FactsSystem, RealRootAnswersMemlockFromGetrlimit) {
  auto s = CollectSystemFacts(Sysroot("/"));
  EXPECT_TRUE(s["memlock"].is_string() || s["memlock"].is_number());
  EXPECT_TRUE(s["glibc"].is_string());
}

}  // namespace
}  // namespace cc::agent
