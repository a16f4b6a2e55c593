// The `ports` command end to end on loopback, through a scripted context:
// listen, probe, stop, and nothing left listening afterwards.
#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "agent/command_testing.h"
#include "agent/commands_decl.h"
#include "agent/port_testing.h"

namespace cc::agent {
namespace {

using testing::ScriptedContext;

// Local ports in LISTEN state in this network namespace (/proc/net/tcp*).
std::set<int> ListeningPorts() {
  std::set<int> out;
  for (const char* f : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(f);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string slot, local, remote, state;
      ls >> slot >> local >> remote >> state;
      if (state != "0A") continue;
      out.insert(std::stoi(local.substr(local.find(':') + 1), nullptr, 16));
    }
  }
  return out;
}

using testing::FreePort;

// A foreign service on 127.0.0.1:port (a real listener we do not own).
int Squatter(int port) {
  int fd = testing::LoopbackListener(port, 16);
  EXPECT_GE(fd, 0);
  return fd;
}

std::map<int, std::string> StatesByPort(const Json& probes) {
  std::map<int, std::string> out;
  for (const Json& p : probes["probes"]) out[p["port"].get<int>()] = p["state"];
  return out;
}

TEST(PortsCommand, ListensProbesAndLeavesNothingListeningAfterStop) {
  int p1 = FreePort(), p2 = FreePort(), held = FreePort(), closed = FreePort();
  int squat = Squatter(held);
  ScriptedContext ctx;
  Status status;
  std::thread agent([&] {
    status = RunPorts({{"listen_addr", "127.0.0.1"},
                       {"ports", {p1, p2, held}},
                       {"ephemeral_samples", 4},
                       {"token", "cc-tok node1"}},
                      ctx);
  });
  Json listening = ctx.WaitResult("listening");
  ASSERT_TRUE(listening.is_object());
  EXPECT_EQ(listening["address"], "127.0.0.1");
  EXPECT_EQ(listening["bound"].get<std::vector<int>>(),
            (std::vector<int>{std::min(p1, p2), std::max(p1, p2)}));
  ASSERT_EQ(listening["in_use"].size(), 1u);
  EXPECT_EQ(listening["in_use"][0]["port"], held);
  EXPECT_NE(listening["in_use"][0]["error"].get<std::string>().find("EADDRINUSE"),
            std::string::npos);
  ASSERT_EQ(listening["ephemeral_range"].size(), 2u);
  std::vector<int> sample = listening["ephemeral_sample"];
  EXPECT_EQ(sample.size(), 4u);
  std::set<int> ours(sample.begin(), sample.end());
  ours.insert({p1, p2});
  for (int p : ours) EXPECT_TRUE(ListeningPorts().count(p)) << p;

  Json targets = Json::array();
  for (int p : {p1, p2, closed})
    targets.push_back({{"node", "node1"}, {"addr", "127.0.0.1"}, {"port", p}});
  targets.push_back({{"node", "node1"}, {"addr", "127.0.0.1"}, {"port", held}, {"plain", true}});
  targets.push_back({{"node", "node1"}, {"addr", "127.0.0.1"}, {"port", sample[0]}});
  ctx.Control(
      "probe",
      {{"targets", targets}, {"tokens", {{"node1", "cc-tok node1"}}}, {"timeout_ms", 1000}});
  Json probes = ctx.WaitResult("probes");
  ASSERT_TRUE(probes.is_object());
  EXPECT_EQ(probes["last"], true);
  auto states = StatesByPort(probes);
  EXPECT_EQ(states[p1], "open");
  EXPECT_EQ(states[p2], "open");
  EXPECT_EQ(states[sample[0]], "open");
  EXPECT_EQ(states[closed], "refused");
  EXPECT_EQ(states[held], "open-other");  // the squatter's queue took it

  ctx.Control("stop", {});
  agent.join();
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(ctx.WaitResult("stopped")["accepted"], 3);
  std::set<int> left = ListeningPorts();
  for (int p : ours) EXPECT_FALSE(left.count(p)) << "still listening on " << p;
  EXPECT_TRUE(left.count(held));  // not ours: untouched
  close(squat);
}

TEST(PortsCommand, StdinClosingClosesEveryListener) {
  int p = FreePort();
  ScriptedContext ctx;
  std::thread agent([&] {
    RunPorts({{"listen_addr", "127.0.0.1"}, {"ports", {p}}, {"token", "t"}}, ctx);
  });
  ASSERT_TRUE(ctx.WaitResult("listening").is_object());
  EXPECT_TRUE(ListeningPorts().count(p));
  ctx.CloseStdin();
  agent.join();
  EXPECT_FALSE(ListeningPorts().count(p));
}

TEST(PortsCommand, NoStopWithinHoldClosesListenersAndSaysSo) {
  int p = FreePort();
  ScriptedContext ctx;
  Status s = RunPorts(
      {{"listen_addr", "127.0.0.1"}, {"ports", {p}}, {"token", "t"}, {"hold_s", 0.2}}, ctx);
  EXPECT_TRUE(s.Is(ErrorKind::kTimeout));
  EXPECT_FALSE(ListeningPorts().count(p));
}

TEST(PortsCommand, LargeProbeListsComeInChunksEndingWithLast) {
  int p = FreePort();
  ScriptedContext ctx;
  std::thread agent([&] {
    RunPorts({{"listen_addr", "127.0.0.1"}, {"ports", {p}}, {"token", "t"}}, ctx);
  });
  ASSERT_TRUE(ctx.WaitResult("listening").is_object());
  Json targets = Json::array();
  for (int i = 0; i < 2500; ++i)
    targets.push_back({{"node", "n"}, {"addr", "127.0.0.1"}, {"port", p}});
  ctx.Control("probe", {{"targets", targets}, {"tokens", {{"n", "t"}}}});
  size_t total = 0;
  for (size_t k = 0; k < 3; ++k) {
    Json chunk = ctx.WaitResult("probes", k);
    ASSERT_TRUE(chunk.is_object()) << k;
    total += chunk["probes"].size();
    EXPECT_EQ(chunk["last"], k == 2);
    for (const Json& pr : chunk["probes"]) EXPECT_EQ(pr["state"], "open");
  }
  EXPECT_EQ(total, 2500u);
  ctx.Control("stop", {});
  agent.join();
}

TEST(PortsCommand, BadArgumentsAreRefusedBeforeAnythingListens) {
  ScriptedContext ctx;
  EXPECT_TRUE(RunPorts({{"ports", {80}}}, ctx).Is(ErrorKind::kBadArgument));  // no token
  EXPECT_TRUE(RunPorts({{"ports", {0}}, {"token", "t"}}, ctx).Is(ErrorKind::kBadArgument));
  EXPECT_TRUE(RunPorts({{"token", "a\nb"}}, ctx).Is(ErrorKind::kBadArgument));
  EXPECT_TRUE(
      RunPorts({{"token", "t"}, {"ephemeral_samples", 1000}}, ctx).Is(ErrorKind::kBadArgument));
}

}  // namespace
}  // namespace cc::agent
