#include "orchestrator/stages/nics/nic_local.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

NicInfo Nic(std::string name, std::string kind, std::string addr, long long mtu = 1500,
            std::optional<long long> speed = std::nullopt, std::string state = "up") {
  NicInfo n;
  n.name = std::move(name);
  n.kind = std::move(kind);
  n.operstate = std::move(state);
  n.mtu = mtu;
  n.speed_mbps = speed;
  if (!addr.empty()) n.addresses = {addr};
  return n;
}

TEST(NicLocal, ThePhysicalInterfaceIsPickedAndTheDockerBridgeNamedAsADecoy) {
  NodeNics node{
      "local1",
      {Nic("lo", "loopback", "127.0.0.1/8", 65536), Nic("docker0", "bridge", "172.17.0.1/16"),
       Nic("eth0", "physical", "10.0.0.5/24", 1500, 25000)},
      {}};
  LocalNics l = DescribeLocalNics(node);
  EXPECT_EQ(l.candidate, "eth0");
  ASSERT_EQ(l.interfaces.size(), 2u) << "loopback left out";
  EXPECT_EQ(l.interfaces[1], "eth0 physical up MTU 1500 25000 Mb/s 10.0.0.5/24");
  EXPECT_EQ(l.summary.rfind("would recommend NCCL_SOCKET_IFNAME=eth0 if every node looked", 0), 0u)
      << l.summary;
  EXPECT_NE(l.summary.find("docker0 virtual"), std::string::npos) << l.summary;
}

TEST(NicLocal, TheFasterThenTheLargerMtuWins) {
  NodeNics node{"n",
                {Nic("eno1", "physical", "10.1.0.5/24", 1500, 1000),
                 Nic("ens1", "physical", "10.2.0.5/24", 9000, 1000),
                 Nic("ens2", "physical", "10.3.0.5/24", 1500, 100000, "down")},
                {}};
  EXPECT_EQ(DescribeLocalNics(node).candidate, "ens1") << "ens2 is down";
}

TEST(NicLocal, WithoutAnAddressedPhysicalInterfaceItSaysSo) {
  NodeNics node{
      "n", {Nic("eth0", "physical", ""), Nic("virbr0", "bridge", "192.168.122.1/24")}, {}};
  LocalNics l = DescribeLocalNics(node);
  EXPECT_EQ(l.candidate, "");
  EXPECT_EQ(l.summary.rfind("no physical interface with an address is up here; virbr0 virtual", 0),
            0u)
      << l.summary;
}

}  // namespace
}  // namespace cc
