#include "orchestrator/run/listen_probe.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>

#include "common/fake_clock.h"
#include "orchestrator/transport/fake_transport.h"

namespace cc {
namespace {

using protocol::Json;

// A scripted agent that says hello, then answers each line (request or
// control) with what `answer` returns for it, and nothing else: unlike
// FakeAgent it never ends a request by itself, as a listening one stays
// open.
FakeProgram PhasedAgent(std::function<std::vector<Json>(const Json& line)> answer) {
  FakeProgram p;
  p.on_start = [](const CommandLine&) {
    return FakeReply::Lines({protocol::MakeHello("test", "x86_64", 1, "gpu001").dump()});
  };
  p.on_line = [answer](const CommandLine&, const std::string& line) {
    FakeReply reply;
    auto req = protocol::ParseRequest(line);
    if (!req.ok()) return reply;
    for (const Json& m : answer(*req)) reply.lines.push_back(m.dump());
    return reply;
  };
  return p;
}

// What the ports and nics agents do: "listening" at once, each probe's
// answer in two chunks, "stopped" and the end on stop.
std::vector<Json> HealthyAgent(const Json& line) {
  int64_t id = line["id"];
  const std::string cmd = line["cmd"];
  if (cmd == "probe") {
    Json all = Json::array();
    for (const Json& t : line["args"]["targets"]) all.push_back({{"node", t}, {"state", "open"}});
    Json first = Json::array(), rest = Json::array();
    for (size_t i = 0; i < all.size(); ++i) (i == 0 ? first : rest).push_back(all[i]);
    return {protocol::MakeResult(id, "probes", {{"probes", first}, {"last", false}}),
            protocol::MakeResult(id, "probes",
                                 {{"probes", rest}, {"last", true}, {"elapsed_ms", 12.5}})};
  }
  if (cmd == "stop") return {protocol::MakeResult(id, "stopped", {}), protocol::MakeEnd(id, true)};
  return {protocol::MakeResult(
      id, "listening", {{"port", 29500}, {"token", line["args"].value("token", std::string())}})};
}

// One node whose agent plays `program`, connected and greeted, with a
// FakeClock for the phases' waits: a timeout costs no real time.
class OneNode {
 public:
  explicit OneNode(FakeProgram program) {
    node_.name = "gpu001";
    FakeNode n;
    n.program = std::move(program);
    transport_.SetNode("gpu001", n);
    auto c = transport_.Connect(node_, Deadline::InSeconds(clock_, 1));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    state_.node = &node_;
    state_.connection = std::move(*c);
    auto p = state_.connection->Start({{"agent"}, {}}, Deadline::InSeconds(clock_, 1));
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    state_.agent = std::make_unique<AgentChannel>(std::move(*p), clock_);
    auto hello = state_.agent->ReadHello(Deadline::InSeconds(clock_, 1));
    EXPECT_TRUE(hello.ok()) << hello.status().ToString();
    peer_.state = &state_;
    peer_.name = node_.name;
  }
  ListeningPeer& peer() { return peer_; }
  FakeClock& clock() { return clock_; }

 private:
  FakeClock clock_;
  Node node_;
  FakeTransport transport_;
  NodeState state_;
  ListeningPeer peer_;
};

TEST(ListenProbe, APeerListensProbesInChunksAndStops) {
  OneNode n(PhasedAgent(HealthyAgent));
  ListeningPeer& p = n.peer();
  Json listening = StartListening(p, n.clock(), "ports", {{"token", "t1"}}, 1);
  ASSERT_TRUE(p.listen.ok()) << p.listen.ToString();
  EXPECT_GE(p.id, 0);
  EXPECT_EQ(listening["token"], "t1");

  ProbeReply r = AskToProbe(p, {{"targets", {"gpu002", "gpu003", "gpu004"}}},
                            Deadline::InSeconds(n.clock(), 1));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.probes.size(), 3u);
  EXPECT_EQ(r.probes[0]["node"], "gpu002");
  EXPECT_EQ(r.probes[2]["node"], "gpu004");
  EXPECT_EQ(r.last.value("elapsed_ms", 0.0), 12.5);
  EXPECT_FALSE(r.last.contains("probes"));

  SendStop(p, n.clock(), 1);
  AwaitStopped(p, n.clock(), 1);
  EXPECT_TRUE(p.stop.ok()) << p.stop.ToString();
  EXPECT_EQ(n.clock().Elapsed(), Clock::duration::zero()) << "a healthy agent costs no waiting";
}

TEST(ListenProbe, AnAgentThatEndsInsteadOfListeningSaysWhy) {
  OneNode n(PhasedAgent([](const Json& line) {
    return std::vector<Json>{protocol::MakeEnd(line["id"], false, "bind 10.0.0.1: in use")};
  }));
  ListeningPeer& p = n.peer();
  Json listening = StartListening(p, n.clock(), "nics", Json::object(), 1);
  EXPECT_TRUE(listening.is_null());
  EXPECT_TRUE(p.listen.Is(ErrorKind::kInternal)) << p.listen.ToString();
  EXPECT_NE(p.listen.ToString().find("bind 10.0.0.1: in use"), std::string::npos);
  EXPECT_GE(p.id, 0) << "the request was sent, so stop must still be tried";
}

TEST(ListenProbe, AMissingProbeAnswerIsATimeoutAfterTheDeadlineAndTheGrace) {
  OneNode n(PhasedAgent([](const Json& line) {
    if (line["cmd"] == "probe") return std::vector<Json>{};  // never answers
    return HealthyAgent(line);
  }));
  ListeningPeer& p = n.peer();
  StartListening(p, n.clock(), "ports", {{"token", "t2"}}, 1);
  ASSERT_TRUE(p.listen.ok()) << p.listen.ToString();
  ProbeReply r =
      AskToProbe(p, {{"targets", {"gpu002"}}}, Deadline::In(n.clock(), Millis(100)), 0.3);
  EXPECT_TRUE(r.status.Is(ErrorKind::kTimeout)) << r.status.ToString();
  EXPECT_EQ(n.clock().Elapsed(), Millis(400)) << "not the deadline and then the grace";
  EXPECT_TRUE(r.probes.empty());
}

TEST(ListenProbe, AStopThatNeverComesIsATimeoutAndAFailedListenerAnError) {
  OneNode silent(PhasedAgent([](const Json& line) {
    if (line["cmd"] == "stop") return std::vector<Json>{};
    return HealthyAgent(line);
  }));
  ListeningPeer& p = silent.peer();
  StartListening(p, silent.clock(), "ports", {{"token", "t2"}}, 1);
  SendStop(p, silent.clock(), 0.2);
  ASSERT_TRUE(p.stop.ok()) << "sending worked";
  AwaitStopped(p, silent.clock(), 0.2);
  EXPECT_TRUE(p.stop.Is(ErrorKind::kTimeout)) << p.stop.ToString();
  EXPECT_EQ(silent.clock().Elapsed(), Millis(200));

  OneNode failing(PhasedAgent([](const Json& line) {
    int64_t id = line["id"];
    if (line["cmd"] == "stop") {
      return std::vector<Json>{protocol::MakeResult(id, "stopped", {}),
                               protocol::MakeEnd(id, false, "udp echo: closed early")};
    }
    return HealthyAgent(line);
  }));
  ListeningPeer& q = failing.peer();
  StartListening(q, failing.clock(), "nics", Json::object(), 1);
  SendStop(q, failing.clock(), 1);
  AwaitStopped(q, failing.clock(), 1);
  EXPECT_TRUE(q.stop.Is(ErrorKind::kInternal)) << q.stop.ToString();
  EXPECT_NE(StopNotConfirmed(q).find("udp echo: closed early"), std::string::npos);
}

TEST(ListenProbe, ARequestNeverSentIsNotStopped) {
  OneNode n(PhasedAgent(HealthyAgent));
  ListeningPeer& p = n.peer();
  SendStop(p, n.clock(), 1);
  AwaitStopped(p, n.clock(), 1);
  EXPECT_TRUE(p.stop.ok());
  EXPECT_EQ(p.id, -1);
}

struct TestPeer : ListeningPeer {
  int extra = 0;
};

TEST(ListeningPeers, FindsPeersByNameAndGivesEachItsToken) {
  Node a, b;
  a.name = "gpu001";
  b.name = "gpu002";
  NodeState sa, sb;
  sa.node = &a;
  sb.node = &b;
  ListeningPeers<TestPeer> peers;
  peers.Add(&sa);
  peers.Add(&sb);
  ASSERT_EQ(peers.size(), 2u);
  EXPECT_EQ(peers.Names(), (std::vector<std::string>{"gpu001", "gpu002"}));
  ASSERT_NE(peers.Find("gpu002"), nullptr);
  peers.Find("gpu002")->extra = 7;
  EXPECT_EQ(peers.at("gpu002").extra, 7);
  EXPECT_EQ(peers.at("gpu002").state, &sb);
  EXPECT_EQ(peers.Find("gpu003"), nullptr);
  auto tokens = peers.Tokens("clustercheck-ports abc");
  EXPECT_EQ(tokens.at("gpu001"), "clustercheck-ports abc gpu001");
  EXPECT_EQ(tokens.size(), 2u);
}

}  // namespace
}  // namespace cc
