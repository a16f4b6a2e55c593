#include "orchestrator/stages/nics/nic_inputs.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

using Json = nlohmann::json;

TEST(NicInputs, SubnetOfMasksTheHostBits) {
  EXPECT_EQ(SubnetOf("10.42.0.3/24"), "10.42.0.0/24");
  EXPECT_EQ(SubnetOf("172.17.0.1/16"), "172.17.0.0/16");
  EXPECT_EQ(SubnetOf("10.1.2.3/32"), "10.1.2.3/32");
  EXPECT_EQ(SubnetOf("2001:db8::5/64"), "2001:db8::/64");
  EXPECT_EQ(SubnetOf("10.1.2.3/0"), "0.0.0.0/0");
}

TEST(NicInputs, LoopbackLinkLocalAndGarbageHaveNoSubnet) {
  EXPECT_FALSE(SubnetOf("127.0.0.1/8"));
  EXPECT_FALSE(SubnetOf("::1/128"));
  EXPECT_FALSE(SubnetOf("fe80::1/64"));
  EXPECT_FALSE(SubnetOf("10.1.2.3"));
  EXPECT_FALSE(SubnetOf("10.1.2.3/33"));
  EXPECT_FALSE(SubnetOf("10.1.2.3/2x"));
  EXPECT_FALSE(SubnetOf("host/24"));
}

TEST(NicInputs, FactsBecomeInterfacesAndIbPorts) {
  Json facts = Json::parse(R"({
    "network": {"interfaces": [
      {"name": "eth0", "kind": "physical", "operstate": "up", "mtu": 9000,
       "speed_mbps": 100000, "addresses": ["10.42.0.3/24", "fe80::1/64"]},
      {"name": "docker0", "kind": "bridge", "operstate": "down", "mtu": 1500,
       "speed_mbps": null, "addresses": ["172.17.0.1/16"]},
      {"kind": "broken"}, 7]},
    "rdma": {"ib_devices": [{"name": "mlx5_1", "ports": [
      {"port": 1, "state": "ACTIVE", "link_layer": "Ethernet", "rate_gbps": 200.0,
       "roce_v2_gid_index": 3}]}]}})");
  NodeNics n = NodeNicsFromFacts("node3", facts);
  ASSERT_EQ(n.nics.size(), 2u);
  EXPECT_EQ(n.nics[0].mtu, 9000);
  EXPECT_EQ(n.nics[0].addresses.size(), 2u);
  EXPECT_FALSE(n.nics[1].speed_mbps.has_value());
  EXPECT_FALSE(NicIsUp(n.nics[1]));
  ASSERT_EQ(n.ib_ports.size(), 1u);
  EXPECT_EQ(n.ib_ports[0].device, "mlx5_1");
  EXPECT_EQ(n.ib_ports[0].roce_v2_gid_index, 3);
  EXPECT_EQ(n.ib_ports[0].rate_gbps, 200.0);
  EXPECT_TRUE(NodeNicsFromFacts("x", Json("nonsense")).nics.empty());
}

TEST(NicInputs, InterfacesGroupBySubnetAcrossNodes) {
  std::vector<NodeNics> nodes(2);
  nodes[0].node = "a";
  nodes[0].nics = {{"eth0", "physical", "up", 9000, {}, {"10.1.0.1/24", "fe80::1/64"}},
                   {"lo", "loopback", "unknown", {}, {}, {"127.0.0.1/8"}}};
  nodes[1].node = "b";
  nodes[1].nics = {{"eth0", "physical", "up", 9000, {}, {"10.1.0.2/24"}},
                   {"eth1", "physical", "up", 1500, {}, {"10.2.0.2/24"}}};
  std::vector<Subnet> s = GroupBySubnet(nodes);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].cidr, "10.1.0.0/24");
  ASSERT_EQ(s[0].members.size(), 2u);
  EXPECT_EQ(s[0].members[1].node, "b");
  EXPECT_EQ(s[0].members[1].addr, "10.1.0.2");
  EXPECT_EQ(s[0].members[1].nic->name, "eth0");
  EXPECT_EQ(s[1].cidr, "10.2.0.0/24");
  EXPECT_TRUE(GroupBySubnet({}).empty());
}

}  // namespace
}  // namespace cc
