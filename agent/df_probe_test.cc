#include "agent/df_probe.h"

#include <gtest/gtest.h>

#include "common/deadline.h"

namespace cc::agent {
namespace {

TEST(DfProbe, PayloadLeavesRoomForTheHeaders) {
  EXPECT_EQ(DfPayloadBytes(9000, false), 8972);
  EXPECT_EQ(DfPayloadBytes(1500, true), 1452);
}

TEST(DfProbe, FullSizeDatagramsComeBackOnLoopbackWithTheToken) {
  UdpEcho echo;
  ASSERT_TRUE(echo.Bind("127.0.0.1").ok());
  ASSERT_GT(echo.port(), 0);
  ASSERT_TRUE(echo.Start("tok-a").ok());
  std::vector<DfResult> r = DfProbeAll({{"127.0.0.1", echo.port(), 9000, "tok-a"}}, 1000, 2);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].state, "ok") << r[0].note;
  EXPECT_GE(r[0].path_mtu, 9000);
  EXPECT_GE(echo.answered(), 2);
}

TEST(DfProbe, AnotherTokenIsNoAnswerAndIsReported) {
  UdpEcho echo;
  ASSERT_TRUE(echo.Bind("127.0.0.1").ok());
  ASSERT_TRUE(echo.Start("tok-other").ok());
  std::vector<DfResult> r = DfProbeAll({{"127.0.0.1", echo.port(), 1500, "tok-a"}}, 200, 1);
  EXPECT_EQ(r[0].state, "no-reply");
  EXPECT_EQ(r[0].reply, "tok-other");
}

TEST(DfProbe, NoEchoListeningIsNoReplyWithinTheDeadline) {
  int port = 0;
  {
    UdpEcho gone;
    ASSERT_TRUE(gone.Bind("127.0.0.1").ok());
    port = gone.port();
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<DfResult> r = DfProbeAll({{"127.0.0.1", port, 1500, ""}}, 200, 2);
  EXPECT_EQ(r[0].state, "no-reply");
  EXPECT_LT(std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - start).count(),
            2000);
}

TEST(DfProbe, BadTargetsAndAddressesAreErrorsNotCrashes) {
  std::vector<DfResult> r = DfProbeAll({{"not-an-ip", 1, 1500, ""}}, 100, 1);
  EXPECT_EQ(r[0].state, "error");
  EXPECT_TRUE(DfProbeAll({}, 100, 1).empty());
  UdpEcho e;
  EXPECT_FALSE(e.Bind("nonsense").ok());
  EXPECT_FALSE(e.Bind("192.0.2.77").ok()) << "not an address of this host";
}

}  // namespace
}  // namespace cc::agent
