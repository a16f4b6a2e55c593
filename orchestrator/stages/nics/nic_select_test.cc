#include "orchestrator/stages/nics/nic_select.h"

#include <gtest/gtest.h>

#include "orchestrator/stages/nics/nic_recommend.h"

namespace cc {
namespace {

NicInfo Nic(const std::string& name, const std::string& addr, long long mtu = 9000,
            long long speed = 100000, const std::string& oper = "up",
            const std::string& kind = "physical") {
  NicInfo n;
  n.name = name;
  n.kind = kind;
  n.operstate = oper;
  n.mtu = mtu;
  n.speed_mbps = speed;
  if (!addr.empty()) n.addresses.push_back(addr);
  return n;
}

// Probes between every ordered pair of `nodes` on `subnet`, all answered by
// their receiver with full-size datagrams passing.
std::vector<NicProbe> AllReach(const std::vector<std::string>& nodes, const std::string& subnet,
                               int bytes = 9000) {
  std::vector<NicProbe> out;
  for (const auto& a : nodes) {
    for (const auto& b : nodes) {
      if (a == b) continue;
      NicProbe p;
      p.src = a;
      p.dst = b;
      p.subnet = subnet;
      p.tcp_state = "open";
      p.answered_by = b;
      p.mtu_bytes = bytes;
      p.mtu_state = "ok";
      out.push_back(p);
    }
  }
  return out;
}

NicProbe* Find(std::vector<NicProbe>& ps, const std::string& src, const std::string& dst,
               const std::string& subnet) {
  for (auto& p : ps) {
    if (p.src == src && p.dst == dst && p.subnet == subnet) return &p;
  }
  return nullptr;
}

const SubnetJudgement* Judgement(const NicSelection& s, const std::string& cidr) {
  for (const auto& j : s.subnets) {
    if (j.cidr == cidr) return &j;
  }
  return nullptr;
}

const NicProblem* Problem(const SubnetJudgement& j, const std::string& node) {
  for (const auto& p : j.problems) {
    if (p.node == node) return &p;
  }
  return nullptr;
}

// The issue's cluster: data (MTU 9000) and mgmt (MTU 1500), docker0 with
// 172.17.0.1 everywhere, node3's data link down, node4's data NIC at 1500.
struct IssueCluster {
  std::vector<NodeNics> nodes;
  std::vector<NicProbe> probes;
  IssueCluster() {
    const std::vector<std::string> names = {"node1", "node2", "node3", "node4"};
    for (int i = 1; i <= 4; ++i) {
      std::string n = "node" + std::to_string(i);
      NodeNics nn;
      nn.node = n;
      nn.nics.push_back(Nic("eth0", "10.42.0." + std::to_string(i) + "/24", i == 4 ? 1500 : 9000,
                            100000, i == 3 ? "down" : "up"));
      nn.nics.push_back(Nic("eth1", "10.43.0." + std::to_string(i) + "/24", 1500, 1000));
      nn.nics.push_back(Nic("docker0", "172.17.0.1/16", 1500, 0, "up", "bridge"));
      nn.nics.back().speed_mbps.reset();
      nodes.push_back(nn);
    }
    probes = AllReach(names, "10.42.0.0/24");
    for (auto& p : probes) {
      if (p.src == "node3" || p.dst == "node3") {
        p.tcp_state = "unreachable";
        p.answered_by = "";
        p.mtu_state = "no-reply";
      } else if (p.src == "node4") {
        p.mtu_state = "too-big-local";
      } else if (p.dst == "node4") {
        p.mtu_state = "lost";
      }
    }
    for (auto& p : AllReach(names, "10.43.0.0/24", 1500)) probes.push_back(p);
    for (auto& p : AllReach(names, "172.16.0.0/16", 1500)) {
      p.subnet = "172.17.0.0/16";
      p.answered_by = p.src;  // each node answers its own probe
      p.tcp_state = "open-other";
      probes.push_back(p);
    }
  }
};

TEST(NicSelect, TheIssueClusterGetsTheDataNetworkWithBothBadNodesNamed) {
  IssueCluster c;
  NicSelection s = SelectNics(c.nodes, c.probes);
  ASSERT_TRUE(s.subnet.has_value()) << s.reason;
  EXPECT_EQ(*s.subnet, "10.42.0.0/24");
  EXPECT_EQ(s.socket_ifname, "eth0");
  EXPECT_EQ(s.tcp_if_include, "10.42.0.0/24");
  EXPECT_EQ(s.address_of.at("node2"), "10.42.0.2");
  const SubnetJudgement* data = Judgement(s, "10.42.0.0/24");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->healthy, (std::vector<std::string>{"node1", "node2"}));
  ASSERT_NE(Problem(*data, "node3"), nullptr);
  EXPECT_EQ(Problem(*data, "node3")->kind, "down");
  EXPECT_NE(Problem(*data, "node3")->message.find("eth0 10.42.0.3 is down"), std::string::npos);
  ASSERT_NE(Problem(*data, "node4"), nullptr);
  EXPECT_EQ(Problem(*data, "node4")->kind, "mtu");
  EXPECT_NE(Problem(*data, "node4")->message.find("MTU 1500, the rest of 10.42.0.0/24 has 9000"),
            std::string::npos)
      << Problem(*data, "node4")->message;
  EXPECT_EQ(Problem(*data, "node1"), nullptr);
  const SubnetJudgement* docker = Judgement(s, "172.17.0.0/16");
  ASSERT_NE(docker, nullptr);
  EXPECT_EQ(docker->exclusion_kind, "same-address");
  EXPECT_NE(docker->excluded.find("172.17.0.1 (docker0) is the same address on node[1-4]"),
            std::string::npos)
      << docker->excluded;
  ASSERT_EQ(s.notes.size(), 2u);
  EXPECT_NE(s.notes[1].find("fallback: 10.43.0.0/24 works on every node"), std::string::npos);
}

TEST(NicSelect, NoNodesSelectsNothingAndSaysWhy) {
  NicSelection s = SelectNics({}, {});
  EXPECT_FALSE(s.subnet.has_value());
  EXPECT_EQ(s.reason, "no nodes");
  EXPECT_TRUE(s.socket_ifname.empty());
  EXPECT_EQ(EnvLines(s).at(0), "# NCCL_SOCKET_IFNAME not set: no nodes");
}

TEST(NicSelect, NodesWithOnlyLoopbackAndLinkLocalHaveNoSubnet) {
  NodeNics a{"a", {Nic("lo", "127.0.0.1/8"), Nic("eth0", "fe80::1/64")}, {}};
  NodeNics b{"b", {Nic("lo", "127.0.0.1/8"), Nic("eth0", "")}, {}};
  NicSelection s = SelectNics({a, b}, {});
  EXPECT_FALSE(s.subnet.has_value());
  EXPECT_TRUE(s.subnets.empty());
  EXPECT_EQ(s.reason, "no interface with a routable address on any node");
}

TEST(NicSelect, EqualSubnetsGoToTheFirstSeen) {
  std::vector<NodeNics> nodes = {
      {"a", {Nic("eth0", "10.1.0.1/24"), Nic("eth1", "10.2.0.1/24")}, {}},
      {"b", {Nic("eth0", "10.1.0.2/24"), Nic("eth1", "10.2.0.2/24")}, {}}};
  auto probes = AllReach({"a", "b"}, "10.1.0.0/24");
  for (auto& p : AllReach({"a", "b"}, "10.2.0.0/24")) probes.push_back(p);
  EXPECT_EQ(SelectNics(nodes, probes).subnet, "10.1.0.0/24");
  std::swap(nodes[0].nics[0], nodes[0].nics[1]);
  std::swap(nodes[1].nics[0], nodes[1].nics[1]);
  EXPECT_EQ(SelectNics(nodes, probes).subnet, "10.2.0.0/24");
}

TEST(NicSelect, TheFasterSubnetWinsATieOnCoverage) {
  std::vector<NodeNics> nodes = {
      {"a", {Nic("eth0", "10.1.0.1/24", 9000, 25000), Nic("ib0", "10.2.0.1/24", 4092, 400000)}, {}},
      {"b",
       {Nic("eth0", "10.1.0.2/24", 9000, 25000), Nic("ib0", "10.2.0.2/24", 4092, 400000)},
       {}}};
  auto probes = AllReach({"a", "b"}, "10.1.0.0/24");
  for (auto& p : AllReach({"a", "b"}, "10.2.0.0/24")) probes.push_back(p);
  NicSelection s = SelectNics(nodes, probes);
  EXPECT_EQ(s.subnet, "10.2.0.0/24");
  EXPECT_EQ(s.socket_ifname, "ib0");
}

TEST(NicSelect, ANodeNoPeerReachesIsNamedUnreachable) {
  std::vector<NodeNics> nodes;
  for (const char* n : {"a", "b", "c"}) {
    nodes.push_back({n,
                     {Nic("eth0", std::string("10.1.0.") +
                                      (n[0] == 'a'   ? "1"
                                       : n[0] == 'b' ? "2"
                                                     : "3") +
                                      "/24")},
                     {}});
  }
  auto probes = AllReach({"a", "b", "c"}, "10.1.0.0/24");
  Find(probes, "a", "c", "10.1.0.0/24")->tcp_state = "filtered";
  Find(probes, "b", "c", "10.1.0.0/24")->tcp_state = "filtered";
  NicSelection s = SelectNics(nodes, probes);
  ASSERT_EQ(s.subnet, "10.1.0.0/24");
  const SubnetJudgement* j = Judgement(s, "10.1.0.0/24");
  EXPECT_EQ(j->healthy, (std::vector<std::string>{"a", "b"}));
  ASSERT_NE(Problem(*j, "c"), nullptr);
  EXPECT_EQ(Problem(*j, "c")->kind, "unreachable");
  EXPECT_EQ(Problem(*j, "c")->message, "c: eth0 10.1.0.3 not reached from a,b (filtered)");
}

TEST(NicSelect, AnAddressAnsweredByTheSenderItselfIsADecoy) {
  std::vector<NodeNics> nodes = {{"a", {Nic("br0", "192.168.9.1/24")}, {}},
                                 {"b", {Nic("br0", "192.168.9.2/24")}, {}}};
  auto probes = AllReach({"a", "b"}, "192.168.9.0/24");
  for (auto& p : probes) p.answered_by = p.src;
  NicSelection s = SelectNics(nodes, probes);
  EXPECT_FALSE(s.subnet.has_value());
  EXPECT_EQ(s.subnets.at(0).exclusion_kind, "self-only");
}

TEST(NicSelect, SubnetsOnOneNodeOrDownEverywhereAreExcluded) {
  std::vector<NodeNics> nodes = {
      {"a", {Nic("eth0", "10.1.0.1/24", 9000, 1, "down"), Nic("eth5", "10.9.0.1/24")}, {}},
      {"b", {Nic("eth0", "10.1.0.2/24", 9000, 1, "lowerlayerdown")}, {}}};
  NicSelection s = SelectNics(nodes, {});
  EXPECT_FALSE(s.subnet.has_value());
  EXPECT_EQ(Judgement(s, "10.1.0.0/24")->exclusion_kind, "down");
  EXPECT_EQ(Judgement(s, "10.1.0.0/24")->excluded, "link down on every node (a,b)");
  EXPECT_EQ(Judgement(s, "10.9.0.0/24")->exclusion_kind, "single-node");
}

TEST(NicSelect, AMostlyBrokenFastNetworkLosesToAWorkingSlowOne) {
  std::vector<NodeNics> nodes;
  std::vector<std::string> names;
  for (int i = 1; i <= 4; ++i) {
    std::string n = "n" + std::to_string(i);
    names.push_back(n);
    nodes.push_back(
        {n,
         {Nic("eth0", "10.1.0." + std::to_string(i) + "/24", 9000, 100000, i == 1 ? "up" : "down"),
          Nic("eth1", "10.2.0." + std::to_string(i) + "/24", 1500, 1000)},
         {}});
  }
  auto probes = AllReach(names, "10.2.0.0/24", 1500);
  NicSelection s = SelectNics(nodes, probes);
  EXPECT_EQ(s.subnet, "10.2.0.0/24");
  EXPECT_EQ(Judgement(s, "10.1.0.0/24")->exclusion_kind, "down");
}

TEST(NicSelect, ASlowerNicIsAWarningNotAnExclusion) {
  std::vector<NodeNics> nodes = {{"a", {Nic("eth0", "10.1.0.1/24")}, {}},
                                 {"b", {Nic("eth0", "10.1.0.2/24")}, {}},
                                 {"c", {Nic("eth0", "10.1.0.3/24", 9000, 25000)}, {}}};
  NicSelection s = SelectNics(nodes, AllReach({"a", "b", "c"}, "10.1.0.0/24"));
  const SubnetJudgement* j = Judgement(s, "10.1.0.0/24");
  EXPECT_EQ(j->healthy.size(), 3u);
  ASSERT_NE(Problem(*j, "c"), nullptr);
  EXPECT_EQ(Problem(*j, "c")->kind, "speed");
  EXPECT_EQ(Problem(*j, "c")->outcome, Outcome::kWarn);
}

TEST(NicSelect, DfLossAloneMarksTheNodeEvenWithMatchingConfiguredMtus) {
  std::vector<NodeNics> nodes = {{"a", {Nic("eth0", "10.1.0.1/24")}, {}},
                                 {"b", {Nic("eth0", "10.1.0.2/24")}, {}},
                                 {"c", {Nic("eth0", "10.1.0.3/24")}, {}}};
  auto probes = AllReach({"a", "b", "c"}, "10.1.0.0/24");
  for (auto& p : probes) {
    if (p.dst == "c" || p.src == "c") p.mtu_state = "lost";
  }
  NicSelection s = SelectNics(nodes, probes);
  const SubnetJudgement* j = Judgement(s, "10.1.0.0/24");
  ASSERT_NE(Problem(*j, "c"), nullptr);
  EXPECT_EQ(Problem(*j, "c")->kind, "mtu");
  EXPECT_NE(Problem(*j, "c")->message.find("9000-byte DF datagrams fail with a,b (lost)"),
            std::string::npos)
      << Problem(*j, "c")->message;
  EXPECT_EQ(j->healthy, (std::vector<std::string>{"a", "b"}));
}

TEST(NicSelect, TwoNodesThatFailEachOtherAreBothUnreachable) {
  std::vector<NodeNics> nodes = {{"a", {Nic("eth0", "10.1.0.1/24")}, {}},
                                 {"b", {Nic("eth0", "10.1.0.2/24")}, {}}};
  auto probes = AllReach({"a", "b"}, "10.1.0.0/24");
  for (auto& p : probes) p.tcp_state = "filtered";
  NicSelection s = SelectNics(nodes, probes);
  EXPECT_FALSE(s.subnet.has_value());
  EXPECT_EQ(Judgement(s, "10.1.0.0/24")->exclusion_kind, "no-peer-reached");
  EXPECT_EQ(Judgement(s, "10.1.0.0/24")->problems.size(), 2u);
}

TEST(NicSelect, ANodeWithoutAnAddressOnTheSubnetIsMissing) {
  std::vector<NodeNics> nodes = {{"a", {Nic("eth0", "10.1.0.1/24")}, {}},
                                 {"b", {Nic("eth0", "10.1.0.2/24")}, {}},
                                 {"c", {Nic("eth0", "")}, {}}};
  NicSelection s = SelectNics(nodes, AllReach({"a", "b"}, "10.1.0.0/24"));
  ASSERT_EQ(s.subnet, "10.1.0.0/24");
  const NicProblem* p = Problem(*Judgement(s, "10.1.0.0/24"), "c");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->message, "c: no address on 10.1.0.0/24");
}

// Issue 17: six nodes with data (10.42.0.i/24, MTU 9000) and mgmt
// (10.43.0.i/24, MTU 1500) and docker0 172.17.0.1 everywhere; `data`
// overrides node i's data address.
struct SixNodes {
  std::vector<NodeNics> nodes;
  std::vector<std::string> names;
  explicit SixNodes(const std::map<int, std::string>& data = {}) {
    for (int i = 1; i <= 6; ++i) {
      std::string n = "node" + std::to_string(i);
      names.push_back(n);
      auto it = data.find(i);
      std::string d = it != data.end() ? it->second : "10.42.0." + std::to_string(i) + "/24";
      NodeNics nn{
          n, {Nic("eth0", d), Nic("eth1", "10.43.0." + std::to_string(i) + "/24", 1500)}, {}};
      nn.nics.push_back(Nic("docker0", "172.17.0.1/16", 1500, 0, "up", "bridge"));
      nodes.push_back(nn);
    }
  }
  std::vector<NicProbe> Probes() const {
    auto probes = AllReach(names, "10.42.0.0/24");
    for (auto& p : AllReach(names, "10.43.0.0/24", 1500)) probes.push_back(p);
    for (auto& p : probes)
      p.addr = (p.subnet == "10.42.0.0/24" ? "10.42.0." : "10.43.0.") + p.dst.str().substr(4);
    return probes;
  }
};

TEST(NicSelect, AWrongPrefixLengthOnOneNodeKeepsTheDataNetworkAndNamesThatNode) {
  SixNodes c({{3, "10.42.0.3/16"}});
  NicSelection s = SelectNics(c.nodes, c.Probes());
  ASSERT_EQ(s.subnet, "10.42.0.0/24") << s.reason;
  const SubnetJudgement* data = Judgement(s, "10.42.0.0/24");
  EXPECT_EQ(data->nodes.size(), 6u);
  EXPECT_EQ(data->healthy, (std::vector<std::string>{"node1", "node2", "node4", "node5", "node6"}));
  ASSERT_EQ(data->problems.size(), 1u);
  EXPECT_EQ(data->problems[0].kind, "prefix");
  EXPECT_EQ(data->problems[0].next_step, "set eth0 on node3 to 10.42.0.3/24");
  EXPECT_EQ(s.address_of.at("node3"), "10.42.0.3");
  EXPECT_EQ(Judgement(s, "10.42.0.0/16"), nullptr);
  ASSERT_FALSE(s.notes.empty());
  EXPECT_NE(s.notes.back().find("fallback: 10.43.0.0/24 works on every node"), std::string::npos);
}

TEST(NicSelect, TwoNodesSharingADataAddressAreNamedAndTheDataNetworkStays) {
  SixNodes c({{6, "10.42.0.5/24"}});
  auto probes = c.Probes();
  // Whoever wins ARP answers for 10.42.0.5; node5 and node6 answer their
  // own probes of each other.
  for (auto& p : probes) {
    if (p.subnet != "10.42.0.0/24") continue;
    if (p.dst == "node6") p.addr = "10.42.0.5";
    if (p.dst == "node6" || p.dst == "node5") {
      p.answered_by = p.src == "node5" || p.src == "node6" ? p.src : "node5";
      p.tcp_state = p.answered_by == p.dst ? "open" : "open-other";
    }
  }
  NicSelection s = SelectNics(c.nodes, probes);
  ASSERT_EQ(s.subnet, "10.42.0.0/24") << s.reason;
  const SubnetJudgement* data = Judgement(s, "10.42.0.0/24");
  EXPECT_TRUE(data->excluded.empty()) << data->excluded;
  EXPECT_EQ(data->healthy, (std::vector<std::string>{"node1", "node2", "node3", "node4"}));
  ASSERT_EQ(data->problems.size(), 2u);
  for (const auto& p : data->problems) {
    EXPECT_EQ(p.kind, "duplicate") << p.message;
    EXPECT_TRUE(p.node == "node5" || p.node == "node6") << p.node;
  }
  EXPECT_EQ(Judgement(s, "172.17.0.0/16")->exclusion_kind, "same-address");
}

TEST(NicSelect, ANetworkMissingOnOneNodeStillBeatsASlowerOneOnAll) {
  SixNodes c;
  c.nodes[5].nics[0].addresses.clear();
  NicSelection s = SelectNics(c.nodes, c.Probes());
  ASSERT_EQ(s.subnet, "10.42.0.0/24") << s.reason;
  const NicProblem* p = Problem(*Judgement(s, "10.42.0.0/24"), "node6");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->kind, "missing");
  EXPECT_EQ(p->next_step, "add 10.42.0.6/24 to eth0 on node6");
}

TEST(NicSelect, AnMtuProblemsFixNamesTheMtuAndTheInterface) {
  IssueCluster c;
  NicSelection s = SelectNics(c.nodes, c.probes);
  const NicProblem* p = Problem(*Judgement(s, "10.42.0.0/24"), "node4");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->next_step,
            "set the MTU of eth0 on node4 to 9000 (ip link set eth0 mtu 9000, and in its network "
            "configuration)");
}

}  // namespace
}  // namespace cc
