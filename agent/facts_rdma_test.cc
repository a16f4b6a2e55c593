#include "agent/facts_rdma.h"

#include <gtest/gtest.h>

#include "agent/facts_network.h"
#include "agent/nic_locality.h"
#include "build_paths.h"

namespace cc::agent {
namespace {

using nlohmann::json;

const std::string kRdmaRoot = std::string(CLUSTERCHECK_FIXTURES) + "/sysroot-rdma";

const json& Device(const json& devs, const std::string& name) {
  for (const auto& d : devs) {
    if (d["name"] == name) return d;
  }
  static const json kNone;
  ADD_FAILURE() << "no device " << name;
  return kNone;
}

TEST(FactsRdma, RateTextGivesGigabitsPerSecond) {
  EXPECT_EQ(ParseIbRateGbps("400 Gb/sec (4X NDR)"), 400.0);
  EXPECT_EQ(ParseIbRateGbps("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_FALSE(ParseIbRateGbps("fast").has_value());
  EXPECT_FALSE(ParseIbRateGbps("400 Mb/sec").has_value());
}

TEST(FactsRdma, RoceV2IndexPrefersTheIpv4MappedEntry) {
  std::vector<GidEntry> gids = {{0, "fe80:0000:0000:0000:0e42:a1ff:fe65:3f10", "IB/RoCE v1", "e"},
                                {1, "fe80:0000:0000:0000:0e42:a1ff:fe65:3f10", "RoCE v2", "e"},
                                {2, "0000:0000:0000:0000:0000:ffff:0a32:0003", "IB/RoCE v1", "e"},
                                {3, "0000:0000:0000:0000:0000:ffff:0a32:0003", "RoCE v2", "e"}};
  EXPECT_EQ(PickRoceV2GidIndex(gids), 3);
  gids.pop_back();
  EXPECT_EQ(PickRoceV2GidIndex(gids), 1) << "only a link-local v2 entry is left";
  gids.erase(gids.begin() + 1);
  EXPECT_FALSE(PickRoceV2GidIndex(gids).has_value()) << "no RoCE v2 entry at all";
  EXPECT_FALSE(PickRoceV2GidIndex({}).has_value());
}

TEST(FactsRdma, EmptyAndIpv4MappedGidsAreRecognised) {
  EXPECT_TRUE(IsEmptyGid("0000:0000:0000:0000:0000:0000:0000:0000"));
  EXPECT_FALSE(IsEmptyGid("fe80:0000:0000:0000:0e42:a1ff:fe65:3f10"));
  EXPECT_TRUE(IsIpv4MappedGid("0000:0000:0000:0000:0000:ffff:0a32:0003"));
  EXPECT_FALSE(IsIpv4MappedGid("fe80:0000:0000:0000:0000:ffff:0a32:0003"));
}

TEST(FactsRdma, Mlx5InfinibandPortIsActiveAt400Gbps) {
  json devs = CollectIbDevices(Sysroot(kRdmaRoot));
  ASSERT_EQ(devs.size(), 3u);
  const json& d = Device(devs, "mlx5_0");
  EXPECT_EQ(d["pci"], "0000:1a:00.0");
  EXPECT_EQ(d["numa_node"], 0);
  EXPECT_EQ(d["netdevs"], json({"ib0"}));
  ASSERT_EQ(d["ports"].size(), 1u);
  const json& p = d["ports"][0];
  EXPECT_EQ(p["port"], 1);
  EXPECT_EQ(p["state"], "ACTIVE");
  EXPECT_EQ(p["phys_state"], "LinkUp");
  EXPECT_EQ(p["link_layer"], "InfiniBand");
  EXPECT_EQ(p["rate_gbps"], 400.0);
  // The all-zero slot is left out; an IB port has no RoCE v2 index.
  ASSERT_EQ(p["gids"].size(), 1u);
  EXPECT_TRUE(p["roce_v2_gid_index"].is_null());
}

TEST(FactsRdma, RoceDeviceHasItsGidTableAndV2IndexAndNetdev) {
  json devs = CollectIbDevices(Sysroot(kRdmaRoot));
  const json& d = Device(devs, "mlx5_1");
  EXPECT_EQ(d["netdevs"], json({"ens1f0"}));
  const json& p = d["ports"][0];
  EXPECT_EQ(p["link_layer"], "Ethernet");
  EXPECT_EQ(p["rate_gbps"], 200.0);
  ASSERT_EQ(p["gids"].size(), 4u);
  EXPECT_EQ(p["gids"][3]["index"], 3);
  EXPECT_EQ(p["gids"][3]["type"], "RoCE v2");
  EXPECT_EQ(p["gids"][3]["gid"], "0000:0000:0000:0000:0000:ffff:0a32:0003");
  EXPECT_EQ(p["gids"][0]["ndev"], "ens1f0");
  EXPECT_EQ(p["roce_v2_gid_index"], 3);
  EXPECT_EQ(p["netdevs"], json({"ens1f0"}));
}

TEST(FactsRdma, PortWithoutLinkIsDown) {
  json devs = CollectIbDevices(Sysroot(kRdmaRoot));
  const json& p = Device(devs, "mlx5_2")["ports"][0];
  EXPECT_EQ(p["state"], "DOWN");
  EXPECT_EQ(p["phys_state"], "Polling");
  EXPECT_TRUE(p["gids"].empty());
  EXPECT_TRUE(Device(devs, "mlx5_2")["numa_node"].is_null());
}

TEST(FactsRdma, NoInfinibandClassIsAnEmptyList) {
  EXPECT_TRUE(
      CollectIbDevices(Sysroot(std::string(CLUSTERCHECK_FIXTURES) + "/sysroot-minimal")).empty());
}

TEST(NicLocality, PathStartsAtThePciRoot) {
  EXPECT_EQ(PciPath("../../../devices/pci0000:00/0000:00:02.0/0000:1a:00.0"),
            (std::vector<std::string>{"pci0000:00", "0000:00:02.0", "0000:1a:00.0"}));
  EXPECT_TRUE(PciPath("../../devices/virtual/net/lo").empty());
}

TEST(NicLocality, LevelsFollowNvidiaSmiTopo) {
  auto p = [](const std::string& s) { return PciPath("/sys/devices/" + s); };
  auto gpu = p("pci0000:00/0000:00:02.0/0000:19:00.0/0000:1b:00.0");
  EXPECT_EQ(PciLocality(gpu, p("pci0000:00/0000:00:02.0/0000:19:00.0/0000:1a:00.0"), 0, 0), "PIX");
  EXPECT_EQ(PciLocality(gpu, p("pci0000:00/0000:00:02.0/0000:18:00.0/0000:1c:00.0"), 0, 0), "PXB");
  EXPECT_EQ(PciLocality(gpu, p("pci0000:00/0000:00:03.0/0000:3b:00.0"), 0, 0), "PHB");
  EXPECT_EQ(PciLocality(gpu, p("pci0000:20/0000:20:01.0/0000:2b:00.0"), 0, 0), "NODE");
  EXPECT_EQ(PciLocality(gpu, p("pci0000:20/0000:20:01.0/0000:2b:00.0"), 0, 1), "SYS");
  EXPECT_EQ(PciLocality(gpu, p("pci0000:20/0000:20:01.0/0000:2b:00.0"), 0, std::nullopt), "SYS");
  EXPECT_EQ(PciLocality(gpu, gpu, 0, 0), "X");
  EXPECT_EQ(PciLocality(gpu, {}, 0, 0), "?");
}

TEST(NicLocality, GpuBusIdsAreMatchedWithNicsInTheFixture) {
  Sysroot root(kRdmaRoot);
  json gpu = {{"gpus", {{{"index", 0}, {"pci_bus_id", "0000:1b:00.0"}}, {{"index", 1}}}}};
  json loc = GpuNicLocality(root, gpu, CollectNetworkFacts(root), CollectIbDevices(root));
  ASSERT_EQ(loc.size(), 1u) << "a GPU without a bus id is left out";
  std::map<std::string, std::string> level;
  for (const auto& n : loc[0]["nics"]) level[n["name"]] = n["level"];
  EXPECT_EQ(level["mlx5_0"], "PIX");
  EXPECT_EQ(level["ib0"], "PIX");
  EXPECT_EQ(level["ens1f0"], "SYS");  // another root, NUMA unknown in the GPU's link
  EXPECT_EQ(level["mlx5_2"], "?");    // no sysfs PCI path for it
  EXPECT_TRUE(GpuNicLocality(root, json::object(), json::object(), json::array()).empty());
}

}  // namespace
}  // namespace cc::agent
