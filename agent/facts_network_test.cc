#include "agent/facts_network.h"

#include <gtest/gtest.h>

#include "build_paths.h"

namespace cc::agent {
namespace {

using nlohmann::json;

const std::string kFixtures = CLUSTERCHECK_FIXTURES;

const json* Find(const json& net, const std::string& name) {
  for (const auto& i : net["interfaces"]) {
    if (i["name"] == name) return &i;
  }
  return nullptr;
}

TEST(FactsNetwork, ClassifiesEachKindFromSysfs) {
  InterfaceSysfs s;
  s.name = "lo";
  EXPECT_EQ(ClassifyInterface(s), "loopback");
  s = {};
  s.name = "enp1s0";
  s.has_device = true;
  EXPECT_EQ(ClassifyInterface(s), "physical");
  s = {};
  s.name = "br0";
  s.has_bridge = true;
  EXPECT_EQ(ClassifyInterface(s), "bridge");
  s = {};
  s.name = "virbr0";
  EXPECT_EQ(ClassifyInterface(s), "bridge");
  s = {};
  s.name = "bond0";
  s.has_bonding = true;
  EXPECT_EQ(ClassifyInterface(s), "bond");
  s = {};
  s.name = "eth0.7";
  s.devtype = "vlan";
  EXPECT_EQ(ClassifyInterface(s), "vlan");
  s = {};
  s.name = "tun0";
  s.has_tun_flags = true;
  EXPECT_EQ(ClassifyInterface(s), "tun");
  s = {};
  s.name = "dummy0";
  s.ifindex = 5;
  s.iflink = 5;
  EXPECT_EQ(ClassifyInterface(s), "virtual");
}

TEST(FactsNetwork, AContainersEth0PairedWithAnotherIfindexIsAVeth) {
  InterfaceSysfs s;
  s.name = "eth0";
  s.ifindex = 2;
  s.iflink = 17;
  EXPECT_EQ(ClassifyInterface(s), "veth");
}

TEST(FactsNetwork, PciAddressShape) {
  EXPECT_TRUE(LooksLikePciAddress("0000:17:00.0"));
  EXPECT_TRUE(LooksLikePciAddress("0000:9a:00.1"));
  EXPECT_FALSE(LooksLikePciAddress("virtio0"));
  EXPECT_FALSE(LooksLikePciAddress("pci0000:00"));
}

TEST(FactsNetwork, AddressFileSkipsCommentsAndKeepsOrder) {
  auto m = ParseAddressFile("# x\neth0 10.0.0.1/24\n\neth0 fe80::1/64 # ll\nlo 127.0.0.1/8\n");
  ASSERT_EQ(m["eth0"].size(), 2u);
  EXPECT_EQ(m["eth0"][0], "10.0.0.1/24");
  EXPECT_EQ(m["eth0"][1], "fe80::1/64");
  EXPECT_EQ(m["lo"].size(), 1u);
}

TEST(FactsNetwork, GpuNodeFixtureInterfaces) {
  json net = CollectNetworkFacts(Sysroot(kFixtures + "/sysroot-gpu-node"));
  // bonding_masters is a file, not an interface.
  EXPECT_EQ(Find(net, "bonding_masters"), nullptr);
  EXPECT_EQ(net["interfaces"].size(), 7u);

  const json* eth0 = Find(net, "eth0");
  ASSERT_NE(eth0, nullptr);
  EXPECT_EQ((*eth0)["kind"], "physical");
  EXPECT_EQ((*eth0)["operstate"], "up");
  EXPECT_EQ((*eth0)["mtu"], 9000);
  EXPECT_EQ((*eth0)["speed_mbps"], 100000);
  EXPECT_EQ((*eth0)["mac"], "b8:3f:d2:aa:bb:01");
  EXPECT_EQ((*eth0)["numa_node"], 0);
  EXPECT_EQ((*eth0)["pci"], "0000:17:00.0");
  EXPECT_EQ((*eth0)["addresses"], json({"10.0.0.11/24", "fe80::1/64"}));

  const json* ib0 = Find(net, "ib0");
  ASSERT_NE(ib0, nullptr);
  EXPECT_EQ((*ib0)["kind"], "physical");
  EXPECT_EQ((*ib0)["numa_node"], 1);
  EXPECT_EQ((*ib0)["pci"], "0000:9a:00.0");

  EXPECT_EQ((*Find(net, "docker0"))["kind"], "bridge");
  EXPECT_TRUE((*Find(net, "docker0"))["speed_mbps"].is_null());
  EXPECT_EQ((*Find(net, "vethab12cd"))["kind"], "veth");
  EXPECT_EQ((*Find(net, "eth0.100"))["kind"], "vlan");
  EXPECT_EQ((*Find(net, "lo"))["kind"], "loopback");
  EXPECT_EQ((*Find(net, "lo"))["addresses"], json({"127.0.0.1/8"}));
}

TEST(FactsNetwork, DeviceAsASymlinkGivesThePciAddressFromItsTarget) {
  json net = CollectNetworkFacts(Sysroot(kFixtures + "/sysroot-gpu-node"));
  const json* eth1 = Find(net, "eth1");
  ASSERT_NE(eth1, nullptr);
  EXPECT_EQ((*eth1)["kind"], "physical");
  EXPECT_EQ((*eth1)["pci"], "0000:18:00.1");
  EXPECT_TRUE((*eth1)["numa_node"].is_null());
  EXPECT_TRUE((*eth1)["speed_mbps"].is_null());
  EXPECT_EQ((*eth1)["addresses"], json::array());
}

TEST(FactsNetwork, InterfaceNamesListsEveryInterface) {
  json net = CollectNetworkFacts(Sysroot(kFixtures + "/sysroot-minimal"));
  EXPECT_EQ(InterfaceNames(net), std::vector<std::string>{"lo"});
  EXPECT_TRUE(InterfaceNames(json::object()).empty());
}

TEST(FactsNetwork, NoSysClassNetIsAnEmptyListWithAReason) {
  json net = CollectNetworkFacts(Sysroot("/nonexistent-clustercheck-root"));
  EXPECT_TRUE(net["interfaces"].empty());
  EXPECT_TRUE(net.contains("reason"));
}

TEST(FactsNetwork, RealRootHasLoopbackWithAnAddress) {
  json net = CollectNetworkFacts(Sysroot("/"));
  const json* lo = Find(net, "lo");
  ASSERT_NE(lo, nullptr);
  EXPECT_EQ((*lo)["kind"], "loopback");
  bool has127 = false;
  for (const auto& a : (*lo)["addresses"]) has127 = has127 || a == "127.0.0.1/8";
  EXPECT_TRUE(has127);
}

}  // namespace
}  // namespace cc::agent
