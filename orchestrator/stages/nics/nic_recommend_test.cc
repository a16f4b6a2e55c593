#include "orchestrator/stages/nics/nic_recommend.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

NicInfo Nic(const std::string& name, const std::string& addr) {
  NicInfo n;
  n.name = name;
  n.operstate = "up";
  if (!addr.empty()) n.addresses.push_back(addr);
  return n;
}

IbPortInfo Port(const std::string& dev, const std::string& state,
                const std::string& layer = "InfiniBand", std::optional<int> gid = std::nullopt) {
  IbPortInfo p;
  p.device = dev;
  p.state = state;
  p.link_layer = layer;
  p.roce_v2_gid_index = gid;
  return p;
}

TEST(SocketIfname, OneNameEverywhereIsThatName) {
  std::vector<NodeNics> nodes = {
      {"a", {Nic("eth0", "10.0.0.1/24"), Nic("eth1", "10.1.0.1/24")}, {}},
      {"b", {Nic("eth0", "10.0.0.2/24"), Nic("eth1", "10.1.0.2/24")}, {}}};
  EXPECT_EQ(SocketIfname({{"a", "eth0"}, {"b", "eth0"}}, nodes), "eth0");
}

TEST(SocketIfname, AnAddressedVlanOnTopForcesAnExactMatch) {
  std::vector<NodeNics> nodes = {
      {"a", {Nic("eth0", "10.0.0.1/24"), Nic("eth0.100", "10.9.0.1/24")}, {}},
      {"b", {Nic("eth0", "10.0.0.2/24")}, {}}};
  EXPECT_EQ(SocketIfname({{"a", "eth0"}, {"b", "eth0"}}, nodes), "=eth0");
  // Without an address the vlan is not a candidate for NCCL.
  nodes[0].nics[1].addresses.clear();
  EXPECT_EQ(SocketIfname({{"a", "eth0"}, {"b", "eth0"}}, nodes), "eth0");
}

TEST(SocketIfname, DifferentNamesShareAPrefixOrBecomeAList) {
  std::vector<NodeNics> nodes = {
      {"a", {Nic("ens1f0", "10.0.0.1/24"), Nic("eno1", "10.1.0.1/24")}, {}},
      {"b", {Nic("ens2f0", "10.0.0.2/24"), Nic("eno1", "10.1.0.2/24")}, {}}};
  EXPECT_EQ(SocketIfname({{"a", "ens1f0"}, {"b", "ens2f0"}}, nodes), "ens");
  nodes[1].nics.push_back(Nic("ens9", "10.5.0.2/24"));
  EXPECT_EQ(SocketIfname({{"a", "ens1f0"}, {"b", "ens2f0"}}, nodes), "ens1f0,ens2f0");
}

TEST(SocketIfname, NoChosenInterfaceIsEmpty) { EXPECT_EQ(SocketIfname({}, {}), ""); }

TEST(IbHca, ActiveInfinibandPortsOnEveryNode) {
  std::vector<NodeNics> nodes = {{"a", {}, {Port("mlx5_0", "ACTIVE"), Port("mlx5_1", "ACTIVE")}},
                                 {"b", {}, {Port("mlx5_0", "ACTIVE"), Port("mlx5_1", "ACTIVE")}}};
  IbChoice c = ChooseIbHca(nodes);
  EXPECT_EQ(c.hca, "mlx5_0:1,mlx5_1:1");
  EXPECT_FALSE(c.gid_index.has_value());
  EXPECT_TRUE(c.problems.empty());
}

TEST(IbHca, ADownPortOnOneNodeIsNamedAndRoceIsIgnoredWhenIbIsActive) {
  std::vector<NodeNics> nodes = {
      {"a", {}, {Port("mlx5_0", "ACTIVE"), Port("mlx5_2", "ACTIVE", "Ethernet", 3)}},
      {"b", {}, {Port("mlx5_0", "ACTIVE")}},
      {"c", {}, {Port("mlx5_0", "DOWN")}}};
  IbChoice c = ChooseIbHca(nodes);
  EXPECT_EQ(c.hca, "mlx5_0:1");
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].node, "c");
  EXPECT_EQ(c.problems[0].message, "c: mlx5_0:1 is DOWN, ACTIVE on a,b");
}

TEST(IbHca, RocePortsGetTheMostCommonV2GidIndex) {
  std::vector<NodeNics> nodes = {{"a", {}, {Port("mlx5_1", "ACTIVE", "Ethernet", 3)}},
                                 {"b", {}, {Port("mlx5_1", "ACTIVE", "Ethernet", 3)}},
                                 {"c", {}, {Port("mlx5_1", "ACTIVE", "Ethernet", 1)}}};
  IbChoice c = ChooseIbHca(nodes);
  EXPECT_EQ(c.hca, "mlx5_1:1");
  EXPECT_EQ(c.gid_index, 3);
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("GID index differs"), std::string::npos);
}

TEST(IbHca, NoActivePortLeavesItUnsetWithANote) {
  IbChoice none = ChooseIbHca({});
  EXPECT_EQ(none.hca, "");
  ASSERT_EQ(none.notes.size(), 1u);
  IbChoice down = ChooseIbHca({{"a", {}, {Port("mlx5_0", "DOWN")}}});
  EXPECT_EQ(down.hca, "");
}

TEST(IbHca, APortActiveOnTooFewNodesIsLeftOut) {
  std::vector<NodeNics> nodes = {{"a", {}, {Port("mlx5_0", "ACTIVE"), Port("mlx5_1", "ACTIVE")}},
                                 {"b", {}, {Port("mlx5_0", "ACTIVE"), Port("mlx5_1", "DOWN")}},
                                 {"c", {}, {Port("mlx5_0", "ACTIVE"), Port("mlx5_1", "DOWN")}}};
  IbChoice c = ChooseIbHca(nodes);
  EXPECT_EQ(c.hca, "mlx5_0:1");
  EXPECT_NE(c.notes.at(0).find("mlx5_1:1 is active only on a"), std::string::npos);
}

// A choice of the RoCE network 10.42.0.0/24 on eth0.
NicSelection RoceSelection() {
  NicSelection s;
  s.subnet = "10.42.0.0/24";
  s.socket_ifname = "eth0";
  s.ib_hca = "mlx5_1:1";
  s.ib_gid_index = 3;
  s.tcp_if_include = "10.42.0.0/24";
  return s;
}

TEST(EnvLines, ASelectionPrintsExportLines) {
  NicSelection s = RoceSelection();
  EXPECT_EQ(EnvLines(s),
            (std::vector<std::string>{"export NCCL_SOCKET_IFNAME=eth0",
                                      "export NCCL_IB_HCA=mlx5_1:1", "export NCCL_IB_GID_INDEX=3",
                                      "export OMPI_MCA_btl_tcp_if_include=10.42.0.0/24",
                                      std::string("# ") + kOobNote}));
  nlohmann::json j = SelectionJson(s);
  EXPECT_EQ(j["NCCL_SOCKET_IFNAME"], "eth0");
  EXPECT_EQ(j["btl_tcp_if_include"], "10.42.0.0/24");
  EXPECT_FALSE(j.contains("oob_tcp_if_include"))
      << "the oob network is the mpi stage's choice: the mpirun host may lack the data network";
  EXPECT_EQ(j["mpi_note"], kOobNote);
  EXPECT_EQ(j["NCCL_IB_GID_INDEX"], 3);
}

TEST(NetworkChoiceOf, LaterStagesGetTheEnvTheBtlNetworkAndEveryAddress) {
  NicSelection s = RoceSelection();
  s.address_of = {{"node1", "10.42.0.1"}, {"node2", "10.42.0.2"}};
  NetworkChoice c = NetworkChoiceOf(s);
  EXPECT_EQ(c.nccl_env, (std::map<std::string, std::string>{{"NCCL_IB_GID_INDEX", "3"},
                                                            {"NCCL_IB_HCA", "mlx5_1:1"},
                                                            {"NCCL_SOCKET_IFNAME", "eth0"}}));
  EXPECT_EQ(c.btl_tcp_if_include, "10.42.0.0/24");
  EXPECT_EQ(c.mpi_note, kOobNote);
  EXPECT_EQ(c.AddressOr("node2", "gpu002.mgmt"), "10.42.0.2");

  s.ib_gid_index.reset();  // InfiniBand, not RoCE: no GID index to advise
  EXPECT_EQ(NetworkChoiceOf(s).nccl_env.at("NCCL_IB_GID_INDEX"), "");
}

}  // namespace
}  // namespace cc
