#include "orchestrator/stages/nccl/nccl_policy.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "build_paths.h"

namespace cc {
namespace {

NcclLogSummary SocketFixture() {
  std::ifstream in(std::string(CLUSTERCHECK_FIXTURES) + "/nccl/socket-2hosts-1gpu-rank0.log");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseNcclLog(ss.str());
}

// Shapes from NCCL's format strings (see nccl_log.cc).
NcclLogSummary IbLog(bool gdr_everywhere) {
  std::string text =
      "g1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB "
      "ib0:10.0.0.1<0>\n"
      "g1:1:1 [0] NCCL INFO Using network IB\n"
      "g1:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 "
      "localRank 0 MNNVL 0\n"
      "g1:1:1 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via "
      "NET/IB/0/GDRDMA\n";
  text += gdr_everywhere ? "g1:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via "
                           "NET/IB/0/GDRDMA\n"
                         : "g1:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via "
                           "NET/IB/0\n";
  return ParseNcclLog(text);
}

bool Quotes(const TransportVerdict& v, const std::string& part) {
  for (const auto& e : v.evidence) {
    if (e.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(NcclPolicy, RequiringIbFailsOnSocketAndQuotesTheLines) {
  TransportVerdict v = JudgeTransport(SocketFixture(), {"IB", false});
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_NE(v.message.find("Socket"), std::string::npos) << v.message;
  EXPECT_TRUE(Quotes(v, "Using network Socket"));
  EXPECT_TRUE(Quotes(v, "via NET/Socket/0"));
  EXPECT_LE(v.evidence.size(), kMaxEvidenceLines);
}

TEST(NcclPolicy, RequiringIbPassesOnIb) {
  TransportVerdict v = JudgeTransport(IbLog(true), {"ib", true});
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.message;
  EXPECT_NE(v.message.find("2/2"), std::string::npos) << v.message;
}

TEST(NcclPolicy, RequiringSocketPassesOnTheSocketFixture) {
  EXPECT_EQ(JudgeTransport(SocketFixture(), {"Socket", false}).outcome, Outcome::kPass);
}

TEST(NcclPolicy, RequiringGdrdmaFailsOnAPathWithoutIt) {
  TransportVerdict v = JudgeTransport(IbLog(false), {"", true});
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_TRUE(Quotes(v, "[send] via NET/IB/0"));
  EXPECT_FALSE(Quotes(v, "[receive]")) << "the GDRDMA path is not evidence";
  EXPECT_NE(v.message.find("1 of 2"), std::string::npos) << v.message;
}

TEST(NcclPolicy, RequiringGdrdmaFailsOnSocketQuotingDisabledHca) {
  TransportVerdict v = JudgeTransport(SocketFixture(), {"", true});
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_TRUE(Quotes(v, "GPU Direct RDMA Disabled for HCA 0 'lo'"));
}

TEST(NcclPolicy, NoPolicyPassesOnSocketWithoutIb) {
  TransportVerdict v = JudgeTransport(SocketFixture(), {});
  EXPECT_EQ(v.outcome, Outcome::kPass);
  EXPECT_NE(v.message.find("Socket"), std::string::npos);
}

TEST(NcclPolicy, NoPolicyWarnsOnSocketWhenIbIsPresent) {
  TransportVerdict v =
      JudgeTransport(SocketFixture(), {}, TransportHints{.ib_devices_present = true});
  EXPECT_EQ(v.outcome, Outcome::kWarn);
  EXPECT_TRUE(Quotes(v, "via NET/Socket/0"));
}

TEST(NcclPolicy, IbDevicesListedInTheLogAlsoTriggerTheWarning) {
  NcclLogSummary s = SocketFixture();
  s.nets_with_devices.push_back("IB");
  EXPECT_EQ(JudgeTransport(s, {}).outcome, Outcome::kWarn);
}

TEST(NcclPolicy, SingleNodeCommIsNotWarnedAboutSocket) {
  NcclLogSummary s = SocketFixture();
  s.nnodes = 1;
  s.paths.clear();
  EXPECT_EQ(JudgeTransport(s, {}, {true}).outcome, Outcome::kPass);
  EXPECT_EQ(JudgeTransport(s, {"IB", false}).outcome, Outcome::kSkip);
  EXPECT_EQ(JudgeTransport(s, {"", true}).outcome, Outcome::kSkip);
}

TEST(NcclPolicy, NcclWarnLinesMakeAWarning) {
  NcclLogSummary s = IbLog(true);
  s.warnings.push_back("NET/IB : Got completion with error 12");
  TransportVerdict v = JudgeTransport(s, {"IB", true});
  EXPECT_EQ(v.outcome, Outcome::kWarn);
  EXPECT_TRUE(Quotes(v, "error 12"));
}

TEST(NcclPolicy, EmptyLogIsAnError) {
  EXPECT_EQ(JudgeTransport(ParseNcclLog(""), {}).outcome, Outcome::kError);
}

TEST(NcclPolicy, MultiNodeLogWithoutPathsCannotProveGdrdma) {
  NcclLogSummary s = SocketFixture();
  s.paths.clear();
  EXPECT_EQ(JudgeTransport(s, {"", true}).outcome, Outcome::kError);
}

}  // namespace
}  // namespace cc
