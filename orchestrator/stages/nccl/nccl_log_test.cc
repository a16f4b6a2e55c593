#include "orchestrator/stages/nccl/nccl_log.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "build_paths.h"

namespace cc {
namespace {

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(CLUSTERCHECK_FIXTURES) + "/nccl/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Synthetic lines in the exact shape of NCCL's format strings (the sources
// are cited in nccl_log.cc): an IB cluster with GPUDirect RDMA, 2 nodes,
// 8 GPUs each. No such hardware was at hand when this was written.
constexpr const char* kIbLog =
    "gpu001:4242:4242 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
    "gpu001:4242:4242 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB "
    "[1]mlx5_1:1/IB [2]mlx5_4:1/RoCE [RO]; OOB ib0:10.10.0.1<0>\n"
    "gpu001:4242:4242 [0] NCCL INFO Using network IB\n"
    "gpu001:4242:4242 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 "
    "'mlx5_0'\n"
    "gpu001:4242:4242 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA "
    "2 'mlx5_4'\n"
    "gpu001:4242:4242 [0] NCCL INFO comm 0x5581 rank 0 nRanks 16 nNodes 2 "
    "localRanks 8 localRank 0 MNNVL 0\n"
    "gpu001:4242:4242 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via "
    "NET/IB/0/GDRDMA\n"
    "gpu001:4242:4242 [0] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via "
    "NET/IB/1(3)/GDRDMA(PCI)/Shared\n"
    "gpu001:4242:4242 [0] NCCL INFO Channel 02/0 : 0[0] -> 8[0] [send] via "
    "NET/IB/2\n"
    "gpu001:4242:4242 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via "
    "P2P/CUMEM/read\n"
    "gpu001:4242:4242 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via "
    "SHM/direct/direct\n"
    "gpu001:4242:4242 [0] NCCL INFO CollNet 00/1 : 0 [send] via "
    "COLLNET/SHARP/0/GDRDMA\n"
    "gpu001:4242:4250 [0] transport/net_ib.cc:1214 NCCL WARN NET/IB : Got "
    "completion from peer 10.10.0.2<51234> with status=12 opcode=0\n";

TEST(NcclLog, SocketFixtureShowsSocketOverLoAcrossTwoNodes) {
  std::string text = ReadFixture("socket-2hosts-1gpu-rank0.log");
  ASSERT_FALSE(text.empty()) << "fixture missing";
  NcclLogSummary s = ParseNcclLog(text);
  EXPECT_EQ(s.version, "2.28.9+cuda13.0");
  EXPECT_EQ(s.network, "Socket");
  EXPECT_NE(s.network_line.find("Using network Socket"), std::string::npos);
  ASSERT_EQ(s.interfaces.size(), 1u);
  EXPECT_EQ(s.interfaces[0], "lo");
  EXPECT_EQ(s.devices[0].rest, "127.0.0.1<0>");
  EXPECT_EQ(s.nnodes, 2);
  EXPECT_EQ(s.nranks, 2);
  EXPECT_TRUE(s.warnings.empty());
  // IB initialised without devices: it must not count as present.
  EXPECT_EQ(s.nets_with_devices, std::vector<std::string>{"Socket"});
  ASSERT_EQ(s.gdr.size(), 1u);
  EXPECT_FALSE(s.gdr[0].enabled);
  EXPECT_EQ(s.gdr[0].name, "lo");
  // Four connections (2 channels x send/receive); ring lines are not paths.
  ASSERT_EQ(s.paths.size(), 4u);
  for (const auto& p : s.paths) {
    EXPECT_EQ(p.transport, "NET") << p.line;
    EXPECT_EQ(p.net, "Socket") << p.line;
    EXPECT_EQ(p.dev, 0) << p.line;
    EXPECT_FALSE(p.gdrdma) << p.line;
    EXPECT_NE(p.line.find("via NET/Socket/0"), std::string::npos);
  }
}

TEST(NcclLog, RankOneFixtureSendsFromRankOne) {
  NcclLogSummary s = ParseNcclLog(ReadFixture("socket-2hosts-1gpu-rank1.log"));
  ASSERT_EQ(s.paths.size(), 4u);
  int sends_from_1 = 0;
  for (const auto& p : s.paths) {
    if (p.direction == "send") {
      EXPECT_EQ(p.from_rank, 1);
      EXPECT_EQ(p.to_rank, 0);
      ++sends_from_1;
    }
  }
  EXPECT_EQ(sends_from_1, 2);
}

TEST(NcclLog, SendLineOverSocketParsesEveryField) {
  auto p = ParseNcclTransportLine(
      "vm:720:720 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via "
      "NET/Socket/0");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->channel, 1);
  EXPECT_EQ(p->connection, 0);
  EXPECT_EQ(p->from_rank, 0);
  EXPECT_EQ(p->to_rank, 1);
  EXPECT_EQ(p->direction, "send");
  EXPECT_EQ(p->transport, "NET");
  EXPECT_EQ(p->net, "Socket");
  EXPECT_EQ(p->dev, 0);
  EXPECT_FALSE(p->gdrdma);
}

TEST(NcclLog, RingAndOtherLinesAreNotPaths) {
  EXPECT_FALSE(ParseNcclTransportLine("vm:720:720 [0] NCCL INFO Channel 00/02 : 0 1"));
  EXPECT_FALSE(
      ParseNcclTransportLine("vm:720:720 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 0"));
  EXPECT_FALSE(ParseNcclTransportLine(""));
}

TEST(NcclLog, IbLogShowsGdrdmaPerPath) {
  NcclLogSummary s = ParseNcclLog(kIbLog);
  EXPECT_EQ(s.version, "2.21.5+cuda12.4");
  EXPECT_EQ(s.network, "IB");
  EXPECT_EQ(s.interfaces, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_4"}));
  EXPECT_EQ(s.devices[2].rest, "1/RoCE");
  EXPECT_EQ(s.nranks, 16);
  EXPECT_EQ(s.nnodes, 2);
  ASSERT_EQ(s.gdr.size(), 2u);
  EXPECT_TRUE(s.gdr[0].enabled);
  EXPECT_EQ(s.gdr[0].name, "mlx5_0");
  EXPECT_FALSE(s.gdr[1].enabled);
  EXPECT_EQ(s.gdr[1].hca, 2);
  ASSERT_EQ(s.paths.size(), 6u);
  EXPECT_TRUE(s.paths[0].gdrdma);
  EXPECT_EQ(s.paths[0].direction, "receive");
  EXPECT_EQ(s.paths[0].from_rank, 8);
  // PXN: the proxy rank is not the device index.
  EXPECT_EQ(s.paths[1].dev, 1);
  EXPECT_EQ(s.paths[1].proxy_rank, 3);
  EXPECT_TRUE(s.paths[1].gdrdma);
  EXPECT_EQ(s.paths[1].detail, "GDRDMA(PCI)/Shared");
  EXPECT_FALSE(s.paths[2].gdrdma);
  EXPECT_EQ(s.paths[2].dev, 2);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("status=12"), std::string::npos);
}

TEST(NcclLog, IntraNodeTransportsAreNamed) {
  NcclLogSummary s = ParseNcclLog(kIbLog);
  const ChannelPath& p2p = s.paths[3];
  EXPECT_EQ(p2p.transport, "P2P");
  EXPECT_EQ(p2p.detail, "CUMEM/read");
  EXPECT_EQ(p2p.direction, "");
  EXPECT_EQ(p2p.to_rank, 1);
  const ChannelPath& shm = s.paths[4];
  EXPECT_EQ(shm.transport, "SHM");
  EXPECT_EQ(shm.detail, "direct/direct");
  EXPECT_EQ(shm.connection, 0);
  const ChannelPath& coll = s.paths[5];
  EXPECT_EQ(coll.transport, "COLLNET");
  EXPECT_EQ(coll.net, "SHARP");
  EXPECT_EQ(coll.from_rank, 0);
  EXPECT_EQ(coll.to_rank, -1);
  EXPECT_TRUE(coll.gdrdma);
}

TEST(NcclLog, OtherP2pShapesParse) {
  auto ipc =
      ParseNcclTransportLine("h:1:1 [1] NCCL INFO Channel 03/1 : 1[1] -> 2[2] via P2P/IPC/read/CE");
  ASSERT_TRUE(ipc);
  EXPECT_EQ(ipc->transport, "P2P");
  EXPECT_EQ(ipc->detail, "IPC/read/CE");
  EXPECT_EQ(ipc->connection, 1);
  auto direct = ParseNcclTransportLine(
      "h:1:1 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/direct pointer");
  ASSERT_TRUE(direct);
  EXPECT_EQ(direct->detail, "direct pointer");
  // Older NCCL put the bus id in the brackets.
  auto old = ParseNcclTransportLine(
      "h:1:1 [0] NCCL INFO Channel 00 : 0[3d000] -> 1[3e000] via "
      "SHM/direct/direct");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->to_rank, 1);
}

TEST(NcclLog, NetworkFallsBackToPathsWhenNotAnnounced) {
  NcclLogSummary s = ParseNcclLog(
      "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via "
      "NET/IB/0/GDRDMA\n");
  EXPECT_EQ(s.network, "IB");
  EXPECT_TRUE(s.interfaces.empty());
}

TEST(NcclLog, EmptyTextGivesEmptySummary) {
  NcclLogSummary s = ParseNcclLog("");
  EXPECT_EQ(s.network, "");
  EXPECT_EQ(s.lines, 0u);
  EXPECT_TRUE(s.paths.empty());
}

}  // namespace
}  // namespace cc
