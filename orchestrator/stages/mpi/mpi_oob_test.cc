#include "orchestrator/stages/mpi/mpi_oob.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

// This machine: loopback, the management network (where the inventory
// addresses are) and, on some setups, the data network.
std::vector<LocalInterface> Controller(bool on_data) {
  std::vector<LocalInterface> v = {{"lo", "127.0.0.1", 8}, {"br-mgmt", "10.43.0.254", 24}};
  if (on_data) v.push_back({"br-data", "10.42.0.254", 24});
  return v;
}

OobInputs Cluster(bool controller_on_data) {
  OobInputs in;
  in.interfaces = Controller(controller_on_data);
  in.inventory_addresses = {{"node1", "10.43.0.1"}, {"node2", "10.43.0.2"}};
  in.data_addresses = {{"node1", "10.42.0.1"}, {"node2", "10.42.0.2"}};
  return in;
}

TEST(MpiOob, TheOperatorsSettingWins) {
  OobInputs in = Cluster(true);
  in.setting = "eth7";
  OobChoice c = ChooseOobNetwork(in);
  EXPECT_EQ(c.value, "eth7");
  EXPECT_EQ(c.source, "setting");
}

TEST(MpiOob, ChoosesTheNetworkOfTheInventoryAddressesOverTheDataNetwork) {
  OobChoice c = ChooseOobNetwork(Cluster(true));
  EXPECT_EQ(c.value, "10.43.0.0/24");
  EXPECT_EQ(c.source, "inventory-addresses");
  EXPECT_NE(c.why.find("br-mgmt (10.43.0.254/24)"), std::string::npos) << c.why;
}

TEST(MpiOob, ALoginNodeWithoutTheDataNetworkStillGetsItsSharedNetwork) {
  OobChoice c = ChooseOobNetwork(Cluster(false));
  EXPECT_EQ(c.value, "10.43.0.0/24");
}

TEST(MpiOob, FallsBackToTheDataNetworkWhenTheInventoryAddressesAreRouted) {
  OobInputs in = Cluster(true);
  in.inventory_addresses = {{"node1", "192.168.7.1"}, {"node2", "192.168.9.2"}};
  OobChoice c = ChooseOobNetwork(in);
  EXPECT_EQ(c.value, "10.42.0.0/24");
  EXPECT_EQ(c.source, "data-addresses");
}

TEST(MpiOob, NoSharedNetworkLeavesItToOpenMpiAndSaysWhy) {
  OobInputs in = Cluster(false);
  in.inventory_addresses = {{"node1", "192.168.7.1"}, {"node2", ""}};
  OobChoice c = ChooseOobNetwork(in);
  EXPECT_EQ(c.value, "");
  EXPECT_EQ(c.source, "none");
  EXPECT_NE(c.why.find("no IPv4 address for node2"), std::string::npos) << c.why;
}

TEST(MpiOob, ASubnetHoldingOnlySomeNodesIsNotShared) {
  OobInputs in = Cluster(false);
  in.inventory_addresses["node3"] = "10.44.0.3";
  in.data_addresses.clear();
  EXPECT_EQ(ChooseOobNetwork(in).source, "none");
}

TEST(MpiOob, LoopbackIsNeverChosen) {
  OobInputs in;
  in.interfaces = {{"lo", "127.0.0.1", 8}};
  in.inventory_addresses = {{"node1", "127.0.0.2"}, {"node2", "127.0.0.3"}};
  EXPECT_EQ(ChooseOobNetwork(in).value, "");
}

TEST(MpiOob, NetworksAreComputedFromAddressAndPrefix) {
  EXPECT_EQ(Ipv4Network("10.43.0.7", 24), "10.43.0.0/24");
  EXPECT_EQ(Ipv4Network("10.43.200.7", 16), "10.43.0.0/16");
  EXPECT_EQ(Ipv4Network("10.43.0.7", 32), "10.43.0.7/32");
  EXPECT_EQ(Ipv4Network("10.43.0.7", 0), "0.0.0.0/0");
  EXPECT_EQ(Ipv4Network("node1", 24), "");
  EXPECT_EQ(Ipv4Network("10.43.0.7", 33), "");
  EXPECT_TRUE(InSubnet("10.43.0.9", {"x", "10.43.0.254", 24}));
  EXPECT_FALSE(InSubnet("10.43.1.9", {"x", "10.43.0.254", 24}));
}

}  // namespace
}  // namespace cc
