#include "agent/sysroot.h"

#include <gtest/gtest.h>

#include "build_paths.h"

namespace cc::agent {
namespace {

const std::string kGpuNode = std::string(CLUSTERCHECK_FIXTURES) + "/sysroot-gpu-node";

TEST(Sysroot, SlashAndEmptyAreTheRealRoot) {
  EXPECT_TRUE(Sysroot("/").IsReal());
  EXPECT_TRUE(Sysroot("").IsReal());
  EXPECT_FALSE(Sysroot(kGpuNode).IsReal());
  EXPECT_EQ(Sysroot("/").Path("/proc/meminfo"), "/proc/meminfo");
}

TEST(Sysroot, PathsAreJoinedUnderTheRootWithoutDoubleSlashes) {
  EXPECT_EQ(Sysroot("/x/y/").Path("/proc/meminfo"), "/x/y/proc/meminfo");
}

TEST(Sysroot, ReadsFilesLinesAndIntegersUnderTheRoot) {
  Sysroot r(kGpuNode);
  auto host = r.ReadLine("/proc/sys/kernel/hostname");
  ASSERT_TRUE(host.has_value());
  EXPECT_EQ(*host, "dgx-a01");
  EXPECT_EQ(r.ReadInt("/sys/class/net/eth0/mtu").value_or(0), 9000);
  EXPECT_EQ(r.ReadInt("/sys/class/net/docker0/speed").value_or(0), -1);
  EXPECT_FALSE(r.ReadInt("/sys/class/net/eth0/address").has_value());
}

TEST(Sysroot, MissingFileIsNotFoundNamingThePath) {
  Sysroot r(kGpuNode);
  auto got = r.Read("/etc/no-such-file");
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(got.status().Is(ErrorKind::kNotFound));
  EXPECT_NE(got.status().message().find(kGpuNode + "/etc/no-such-file"), std::string::npos);
  EXPECT_FALSE(r.ReadLine("/etc/no-such-file").has_value());
}

TEST(Sysroot, ListsDirectoriesSortedAndAbsentOnesEmpty) {
  Sysroot r(kGpuNode);
  auto ib = r.List("/sys/class/infiniband");
  ASSERT_EQ(ib.size(), 2u);
  EXPECT_EQ(ib[0], "mlx5_0");
  EXPECT_EQ(ib[1], "mlx5_1");
  EXPECT_TRUE(r.List("/sys/class/nothing").empty());
  EXPECT_TRUE(r.IsDir("/sys/class/net/eth0"));
  EXPECT_FALSE(r.IsDir("/sys/class/net/bonding_masters"));
}

TEST(Sysroot, ReadLinkGivesTheTargetEvenWhenItDangles) {
  Sysroot r(kGpuNode);
  auto link = r.ReadLink("/sys/class/net/eth1/device");
  ASSERT_TRUE(link.has_value());
  EXPECT_NE(link->find("0000:18:00.1"), std::string::npos);
  EXPECT_TRUE(r.Exists("/sys/class/net/eth1/device"));
  EXPECT_FALSE(r.ReadLink("/sys/class/net/eth0/device").has_value());
}

TEST(Sysroot, TrimDropsSurroundingWhitespaceOnly) {
  EXPECT_EQ(Trim("  a b \n"), "a b");
  EXPECT_EQ(Trim("\t\n"), "");
}

}  // namespace
}  // namespace cc::agent
