// The `nics` command end to end on loopback through a scripted context:
// a listener per address (one of them not this host's), TCP token and DF
// datagram probes, stop.
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "agent/command_testing.h"
#include "agent/commands_decl.h"
#include "agent/port_testing.h"

namespace cc::agent {
namespace {

using testing::ScriptedContext;

TEST(NicsCommand, ListensPerAddressProbesWithTokensAndDfDatagramsThenStops) {
  ScriptedContext ctx;
  Status status;
  int port = testing::FreePort();
  std::thread agent([&] {
    status = RunNics({{"addresses",
                       {{{"nic", "lo"}, {"addr", "127.0.0.1"}},
                        {{"nic", "lo"}, {"addr", "127.0.0.2"}},
                        {{"nic", "eth9"}, {"addr", "192.0.2.77"}}}},
                      {"token", "tok node1"},
                      {"port", port}},
                     ctx);
  });
  Json listening = ctx.WaitResult("listening");
  ASSERT_TRUE(listening.is_object());
  const Json& l = listening["listeners"];
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0]["error"], "");
  EXPECT_EQ(l[0]["tcp_port"], port) << "the asked-for port, same on every address";
  EXPECT_EQ(l[1]["tcp_port"], port);
  EXPECT_EQ(l[0]["udp_port"], port);
  EXPECT_NE(l[2]["error"].get<std::string>().find("192.0.2.77"), std::string::npos)
      << "not an address of this host: no fallback to all addresses";
  EXPECT_EQ(l[2]["tcp_port"], 0);

  Json targets = Json::array();
  for (const char* a : {"127.0.0.1", "127.0.0.2"}) {
    targets.push_back({{"node", "node1"},
                       {"subnet", "127.0.0.0/8"},
                       {"addr", a},
                       {"tcp_port", port},
                       {"udp_port", port},
                       {"mtu_bytes", 9000}});
  }
  // As node2 it expects node2's token: node1 answers instead.
  targets.push_back({{"node", "node2"},
                     {"subnet", "127.0.0.0/8"},
                     {"addr", "127.0.0.1"},
                     {"tcp_port", port},
                     {"udp_port", port},
                     {"mtu_bytes", 1500}});
  ctx.Control("probe", {{"targets", targets},
                        {"tokens", {{"node1", "tok node1"}, {"node2", "tok node2"}}},
                        {"timeout_ms", 500},
                        {"tries", 2}});
  Json probes = ctx.WaitResult("probes");
  ASSERT_TRUE(probes.is_object());
  const Json& p = probes["probes"];
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0]["state"], "open");
  EXPECT_EQ(p[0]["mtu_state"], "ok");
  EXPECT_EQ(p[0]["mtu_bytes"], 9000);
  EXPECT_EQ(p[1]["state"], "open");
  EXPECT_EQ(p[1]["subnet"], "127.0.0.0/8");
  EXPECT_EQ(p[2]["state"], "open-other");
  EXPECT_EQ(p[2]["reply"], "tok node1");
  EXPECT_EQ(p[2]["mtu_state"], "no-reply");
  EXPECT_EQ(p[2]["mtu_reply"], "tok node1");

  ctx.Control("stop", Json::object());
  Json stopped = ctx.WaitResult("stopped");
  agent.join();
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_GE(stopped["accepted"].get<int>(), 3);
  EXPECT_GE(stopped["answered"].get<int>(), 4);
}

TEST(NicsCommand, BadArgumentsAreErrorsNamingTheField) {
  ScriptedContext ctx;
  EXPECT_NE(RunNics({{"token", "t"}}, ctx).message().find("args.addresses"), std::string::npos);
  EXPECT_NE(RunNics({{"addresses", Json::array()}}, ctx).message().find("args.token"),
            std::string::npos);
  EXPECT_NE(RunNics({{"addresses", Json::array()}, {"token", "t"}, {"port", 70000}}, ctx)
                .message()
                .find("args.port"),
            std::string::npos);
  EXPECT_NE(RunNics({{"addresses", {7}}, {"token", "t"}}, ctx).message().find("addr"),
            std::string::npos);
}

TEST(NicsCommand, ClosedStdinClosesEverything) {
  ScriptedContext ctx;
  std::thread agent([&] {
    EXPECT_TRUE(
        RunNics({{"addresses", {{{"addr", "127.0.0.1"}}}}, {"token", "t"}, {"port", 0}}, ctx).ok());
  });
  Json listening = ctx.WaitResult("listening");
  ASSERT_TRUE(listening.is_object());
  int port = listening["listeners"][0]["tcp_port"];
  EXPECT_GT(port, 0);
  ctx.CloseStdin();
  agent.join();
  int fd = testing::LoopbackListener(port, 1);
  EXPECT_GE(fd, 0) << "the port is free again";
  if (fd >= 0) close(fd);
}

}  // namespace
}  // namespace cc::agent
