#include "orchestrator/stages/nics/nic_problems.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

NicInfo Nic(const std::string& name, const std::string& addr,
            const std::string& kind = "physical") {
  NicInfo n;
  n.name = name;
  n.kind = kind;
  n.operstate = "up";
  n.mtu = 9000;
  if (!addr.empty()) n.addresses.push_back(addr);
  return n;
}

// Six nodes: data 10.42.0.i/24 on eth0, mgmt 10.43.0.i/24 on eth1, docker0
// 172.17.0.1/16 everywhere; `data(i)` may override node i's data address.
std::vector<NodeNics> Six(const std::map<int, std::string>& data = {}) {
  std::vector<NodeNics> out;
  for (int i = 1; i <= 6; ++i) {
    std::string n = "node" + std::to_string(i);
    auto it = data.find(i);
    std::string d = it != data.end() ? it->second : "10.42.0." + std::to_string(i) + "/24";
    out.push_back({n,
                   {Nic("eth0", d), Nic("eth1", "10.43.0." + std::to_string(i) + "/24"),
                    Nic("docker0", "172.17.0.1/16", "bridge")},
                   {}});
  }
  return out;
}

const Subnet* Find(const NicGrouping& g, const std::string& cidr) {
  for (const Subnet& s : g.subnets) {
    if (s.cidr == cidr) return &s;
  }
  return nullptr;
}

TEST(NicProblems, AHealthyClusterHasNoProblems) {
  auto nodes = Six();
  NicGrouping g = GroupIntoNetworks(nodes);
  EXPECT_EQ(g.subnets.size(), 3u);
  for (const auto& [cidr, ps] : g.problems) EXPECT_TRUE(ps.empty()) << cidr;
  for (const Subnet& s : g.subnets) {
    AddressSharing sh = JudgeSharedAddresses(s);
    EXPECT_TRUE(sh.duplicates.empty()) << s.cidr;
    EXPECT_EQ(sh.decoy_addr.empty(), s.cidr != "172.17.0.0/16") << s.cidr;
  }
}

TEST(NicProblems, AWrongPrefixLengthKeepsTheAddressOnTheDataNetworkAndNamesTheFix) {
  for (const char* wrong : {"10.42.0.3/16", "10.42.0.3/25", "10.42.0.3/8"}) {
    auto nodes = Six({{3, wrong}});
    NicGrouping g = GroupIntoNetworks(nodes);
    const Subnet* data = Find(g, "10.42.0.0/24");
    ASSERT_NE(data, nullptr) << wrong;
    EXPECT_EQ(data->members.size(), 6u) << wrong << ": node3 is counted (and probed) there";
    EXPECT_EQ(g.subnets.size(), 3u) << wrong << ": node3's lone subnet is gone";
    ASSERT_EQ(g.problems["10.42.0.0/24"].size(), 1u) << wrong;
    const NicProblem& p = g.problems["10.42.0.0/24"][0];
    EXPECT_EQ(p.node, "node3");
    EXPECT_EQ(p.kind, "prefix");
    EXPECT_EQ(p.outcome, Outcome::kFail);
    EXPECT_EQ(p.next_step, "set eth0 on node3 to 10.42.0.3/24");
    EXPECT_NE(p.message.find(std::string("eth0 ") + wrong), std::string::npos) << p.message;
  }
}

TEST(NicProblems, AnAddressInAnotherSubnetOnTheUsualInterfaceIsAWrongSubnet) {
  auto nodes = Six({{4, "10.42.7.4/24"}});
  NicGrouping g = GroupIntoNetworks(nodes);
  ASSERT_EQ(g.problems["10.42.0.0/24"].size(), 1u);
  const NicProblem& p = g.problems["10.42.0.0/24"][0];
  EXPECT_EQ(p.node, "node4");
  EXPECT_EQ(p.kind, "subnet");
  EXPECT_EQ(p.next_step, "set eth0 on node4 to 10.42.0.4/24");
  EXPECT_NE(p.message.find("10.42.7.4/24 is outside 10.42.0.0/24"), std::string::npos) << p.message;
}

TEST(NicProblems, ANodeWithoutTheNetworkIsMissingWithAFreeAddressToAdd) {
  auto nodes = Six();
  nodes[5].nics[0].addresses.clear();
  NicGrouping g = GroupIntoNetworks(nodes);
  ASSERT_EQ(g.problems["10.42.0.0/24"].size(), 1u);
  const NicProblem& p = g.problems["10.42.0.0/24"][0];
  EXPECT_EQ(p.kind, "missing");
  EXPECT_EQ(p.message, "node6: no address on 10.42.0.0/24");
  EXPECT_EQ(p.next_step, "add 10.42.0.6/24 to eth0 on node6");
}

TEST(NicProblems, TwoNodesSharingAPhysicalAddressAreADuplicateNotADecoy) {
  auto nodes = Six({{6, "10.42.0.5/24"}});
  NicGrouping g = GroupIntoNetworks(nodes);
  const Subnet* data = Find(g, "10.42.0.0/24");
  ASSERT_NE(data, nullptr);
  AddressSharing sh = JudgeSharedAddresses(*data);
  EXPECT_TRUE(sh.decoy_addr.empty());
  ASSERT_EQ(sh.duplicates.size(), 2u);
  EXPECT_EQ(sh.duplicates[0].node, "node5");
  EXPECT_EQ(sh.duplicates[1].node, "node6");
  EXPECT_EQ(sh.duplicates[0].kind, "duplicate");
  EXPECT_EQ(sh.duplicates[0].next_step,
            "give node[5-6] distinct addresses on 10.42.0.0/24 (they share 10.42.0.5; 10.42.0.6 "
            "is free)");
}

TEST(NicProblems, TheSameAddressOnMostNodesOrOnBridgesIsADecoy) {
  auto nodes =
      Six({{1, "10.42.0.9/24"}, {2, "10.42.0.9/24"}, {3, "10.42.0.9/24"}, {4, "10.42.0.9/24"}});
  NicGrouping g = GroupIntoNetworks(nodes);
  AddressSharing sh = JudgeSharedAddresses(*Find(g, "10.42.0.0/24"));
  EXPECT_EQ(sh.decoy_addr, "10.42.0.9");
  EXPECT_TRUE(sh.duplicates.empty());
  // virbr0 with one address on two of six nodes, beside distinct ones.
  Subnet virbr{"192.168.122.0/24", {}};
  NicInfo br = Nic("virbr0", "192.168.122.1/24", "bridge");
  NicInfo other = Nic("virbr0", "192.168.122.7/24", "bridge");
  virbr.members = {{"a", &br, "192.168.122.1"},
                   {"b", &br, "192.168.122.1"},
                   {"c", &other, "192.168.122.7"},
                   {"d", &other, "192.168.122.8"},
                   {"e", &other, "192.168.122.9"}};
  EXPECT_EQ(JudgeSharedAddresses(virbr).decoy_addr, "192.168.122.1");
}

TEST(FreeAddress, PrefersTheHostPartThenTheNextAfterTheHighestTaken) {
  EXPECT_EQ(FreeAddress("10.42.0.0/24", {"10.42.0.1", "10.42.0.2"}, "10.43.0.3"), "10.42.0.3");
  EXPECT_EQ(FreeAddress("10.42.0.0/24", {"10.42.0.1", "10.42.0.3"}, "10.43.0.3"), "10.42.0.4");
  EXPECT_EQ(FreeAddress("10.42.0.0/24", {"10.42.0.254"}), "10.42.0.1");
  EXPECT_EQ(FreeAddress("10.42.0.0/30", {"10.42.0.1", "10.42.0.2"}), "");
  EXPECT_EQ(FreeAddress("2001:db8::/64", {}), "");
}

}  // namespace
}  // namespace cc
