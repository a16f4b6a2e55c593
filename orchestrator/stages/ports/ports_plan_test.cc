#include "orchestrator/stages/ports/ports_plan.h"

#include <gtest/gtest.h>

#include <set>

#include "orchestrator/run/schedule.h"
#include "orchestrator/stages/ports/probe_plan.h"

namespace cc {
namespace {

using Json = nlohmann::json;

TEST(ReadPortsSettings, DefaultsToTheRendezvousPortAndEightEphemeralPorts) {
  auto s = ReadPortsSettings(Json::object());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->ports, std::vector<int>{29500});
  EXPECT_EQ(s->ephemeral_samples, 8);
  EXPECT_GE(s->timeout_ms, 1);
  EXPECT_EQ(s->parallel, 256);
  EXPECT_EQ(s->senders_per_receiver, 8);
}

TEST(ReadPortsSettings, ExpandsRangesSortsAndDropsDuplicates) {
  auto s = ReadPortsSettings({{"ports", {29500, "60000-60003", 22, 60001}},
                              {"ephemeral_samples", 0},
                              {"timeout_ms", 300},
                              {"parallel", 32},
                              {"senders_per_receiver", 2}});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->ports, (std::vector<int>{22, 29500, 60000, 60001, 60002, 60003}));
  EXPECT_EQ(s->ephemeral_samples, 0);
  EXPECT_EQ(s->timeout_ms, 300);
  EXPECT_EQ(s->parallel, 32);
  EXPECT_EQ(s->senders_per_receiver, 2);
  EXPECT_FALSE(ReadPortsSettings({{"senders_per_receiver", 0}}).ok());
}

TEST(ReadPortsSettings, AHugeRangeIsAnErrorNamingTheKey) {
  auto s = ReadPortsSettings({{"ports", {"1-65535"}}});
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.status().Is(ErrorKind::kBadInventory));
  EXPECT_NE(s.status().message().find("stages.ports.ports"), std::string::npos);
  EXPECT_NE(s.status().message().find("512"), std::string::npos);
  EXPECT_TRUE(ReadPortsSettings({{"ports", {"1000-1511"}}}).ok());  // exactly 512
  EXPECT_FALSE(ReadPortsSettings({{"ports", {"1000-1511", 2000}}}).ok());
  EXPECT_FALSE(ReadPortsSettings({{"ports", {"9-3"}}}).ok());
  EXPECT_FALSE(ReadPortsSettings({{"ephemeral_samples", 65}}).ok());
}

TEST(ParseListening, ReadsBoundPortsBindErrorsAndTheEphemeralSample) {
  ReceiverInfo r;
  Status s = ParseListening(Json::parse(R"({"address":"10.0.0.3","bound":[29500],
        "in_use":[{"port":8080,"error":"EADDRINUSE: Address already in use"}],
        "ephemeral_range":[32768,60999],"ephemeral_sample":[34532,38061]})"),
                            &r);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(r.bound, std::set<int>{29500});
  EXPECT_EQ(r.bind_errors.at(8080), "EADDRINUSE: Address already in use");
  EXPECT_EQ(r.ephemeral, (std::vector<int>{34532, 38061}));
  ASSERT_TRUE(r.ephemeral_range.has_value());
  EXPECT_EQ(r.ephemeral_range->second, 60999);
  EXPECT_FALSE(ParseListening(Json::parse(R"({"bound":[0]})"), &r).ok());
  EXPECT_FALSE(ParseListening(Json::parse(R"({"in_use":[5]})"), &r).ok());
  EXPECT_FALSE(ParseListening(Json("x"), &r).ok());
}

ReceiverInfo Receiver(const std::string& node, std::vector<int> bound, std::vector<int> eph) {
  ReceiverInfo r;
  r.node = node;
  r.addr = "10.0.0." + node.substr(1);
  r.ssh_port = 22;
  r.bound = {bound.begin(), bound.end()};
  r.ephemeral = eph;
  return r;
}

TEST(PlanProbes, EverySenderProbesEveryOtherReceiversPortsButNeverItself) {
  std::vector<ReceiverInfo> rs = {Receiver("n1", {29500}, {40001}),
                                  Receiver("n2", {29500}, {40002, 50002}),
                                  Receiver("n3", {29500}, {})};
  auto plan = PlanProbes({"n1", "n2", "n3"}, rs, {29500});
  // n1: n2 (22, 29500, 2 eph) + n3 (22, 29500) = 6; n2: n1 (22, 29500,
  // 1 eph) + n3 2 = 5; n3: n1 3 + n2 4 = 7.
  EXPECT_EQ(plan.size(), 18u);
  for (const auto& p : plan) {
    EXPECT_NE(p.src, p.dst);
    EXPECT_EQ(p.plain, p.kind == PortKind::kSsh) << p.dst << ":" << p.port;
  }
  EXPECT_EQ(plan[0].src, "n1");
  EXPECT_EQ(plan[0].dst, "n2");
  EXPECT_EQ(plan[0].port, 22);
  EXPECT_EQ(plan[0].addr, "10.0.0.2");
}

TEST(PlanProbes, APortHeldByAnotherProcessIsAPlainConnectCarryingTheBindError) {
  ReceiverInfo r = Receiver("n2", {}, {});
  r.bind_errors[29500] = "EADDRINUSE: Address already in use";
  r.ssh_port.reset();  // local transport: no SSH port to check
  auto plan = PlanProbes({"n1"}, {r}, {29500});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_TRUE(plan[0].plain);
  EXPECT_EQ(plan[0].bind_error, "EADDRINUSE: Address already in use");
}

TEST(PlanProbes, TheSshPortListedAgainIsProbedOnceAsSsh) {
  auto plan = PlanProbes({"n1"}, {Receiver("n2", {29500}, {})}, {22, 29500});
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].kind, PortKind::kSsh);
  EXPECT_EQ(plan[1].port, 29500);
}

PlannedProbe Probe(PortKind kind, bool plain = false, std::string bind_error = "") {
  return {"n1", "n2", "10.0.0.2", kind == PortKind::kSsh ? 22 : 29500, kind, plain, bind_error};
}

TEST(JudgeProbe, MapsAgentStatesToStoredStatesAndOutcomes) {
  std::map<std::string, std::string> tokens = {{"n2", "tok n2"}, {"n5", "tok n5"}};
  auto j = [&](const PlannedProbe& p, const std::string& st, const std::string& reply = "") {
    return JudgeProbe(p, st, reply, "", tokens);
  };
  EXPECT_EQ(j(Probe(PortKind::kListed), "open").outcome, Outcome::kPass);
  auto ssh = j(Probe(PortKind::kSsh, true), "open-other", "SSH-2.0-OpenSSH_9.2p1");
  EXPECT_EQ(ssh.state, "open");
  EXPECT_EQ(ssh.outcome, Outcome::kPass);
  EXPECT_NE(ssh.message.find("SSH-2.0"), std::string::npos);
  auto held = j(Probe(PortKind::kListed, true, "EADDRINUSE: Address already in use"), "open-other",
                "HTTP/1.0 400");
  EXPECT_EQ(held.state, "in-use");
  EXPECT_EQ(held.outcome, Outcome::kWarn);
  EXPECT_NE(held.message.find("EADDRINUSE"), std::string::npos);
  auto wrong = j(Probe(PortKind::kListed), "open-other", "tok n5");
  EXPECT_EQ(wrong.state, "wrong-host");
  EXPECT_NE(wrong.message.find("n5"), std::string::npos);
  auto silent = j(Probe(PortKind::kListed), "open-other", "");
  EXPECT_EQ(silent.state, "open");  // reachable; our listener was slow
  EXPECT_EQ(silent.outcome, Outcome::kWarn);
  auto other = j(Probe(PortKind::kListed), "open-other", "220 smtp");
  EXPECT_EQ(other.state, "in-use");
  EXPECT_EQ(j(Probe(PortKind::kListed), "refused").state, "refused");
  EXPECT_EQ(j(Probe(PortKind::kListed), "refused").outcome, Outcome::kFail);
  EXPECT_EQ(j(Probe(PortKind::kEphemeral), "filtered").outcome, Outcome::kFail);
  EXPECT_EQ(j(Probe(PortKind::kListed), "unreachable").state, "unreachable");
  EXPECT_EQ(j(Probe(PortKind::kListed), "error").outcome, Outcome::kError);
  // Nothing of ours listened and nothing else holds the port: untestable.
  auto priv = j(Probe(PortKind::kListed, true, "EACCES: Permission denied"), "refused");
  EXPECT_EQ(priv.outcome, Outcome::kError);
  // But a DROP is still a DROP.
  EXPECT_EQ(j(Probe(PortKind::kListed, true, "EACCES: Permission denied"), "filtered").outcome,
            Outcome::kFail);
}

TEST(ListenPorts, LeavesTheSshPortToSshdWhenTheInventoryListsIt) {
  EXPECT_EQ(ListenPorts({22, 29500}, 22), (std::vector<int>{29500}));
  EXPECT_EQ(ListenPorts({2222, 29500}, 2222), (std::vector<int>{29500}));
  EXPECT_EQ(ListenPorts({22, 29500}, 2222), (std::vector<int>{22, 29500}));
  EXPECT_EQ(ListenPorts({22, 29500}, std::nullopt), (std::vector<int>{22, 29500}));
}

TEST(JudgeProbe, TheSshPortCountsOpenOnSshdsBannerAndInUseOnAnythingElse) {
  std::map<std::string, std::string> tokens = {{"n2", "tok n2"}};
  auto banner =
      JudgeProbe(Probe(PortKind::kSsh, true), "open-other", "SSH-2.0-OpenSSH_9.2p1", "", tokens);
  EXPECT_EQ(banner.state, "open");
  EXPECT_EQ(banner.outcome, Outcome::kPass);
  auto other =
      JudgeProbe(Probe(PortKind::kSsh, true), "open-other", "HTTP/1.0 200 squatter", "", tokens);
  EXPECT_EQ(other.state, "in-use");
  EXPECT_EQ(other.outcome, Outcome::kWarn);
  EXPECT_NE(other.message.find("not an SSH banner"), std::string::npos);
  // sshd past MaxStartups closes without a banner: the path still works.
  auto closed = JudgeProbe(Probe(PortKind::kSsh, true), "open-other", "",
                           "connected, then closed without a word", tokens);
  EXPECT_EQ(closed.outcome, Outcome::kPass);
}

TEST(BatchProbes, EveryReceiverIsProbedByAtMostCountSendersAndEveryProbeRunsOnce) {
  for (size_t n : {2u, 5u, 16u, 17u}) {
    std::vector<std::string> nodes;
    std::vector<ReceiverInfo> receivers;
    for (size_t i = 1; i <= n; ++i) {
      nodes.push_back("n" + std::to_string(i));
      receivers.push_back(Receiver(nodes.back(), {29500}, {40000, 50000}));
    }
    auto plan = PlanProbes(nodes, receivers, {29500});
    ProbePlan held(nodes, receivers, {29500});
    auto rounds = RoundRobinRounds(nodes);
    for (size_t count : {1u, 3u, 8u}) {
      std::vector<int> seen(plan.size(), 0);
      for (size_t first = 0; first < rounds.size(); first += count) {
        std::map<std::string, std::set<std::string>> senders_of;
        for (const auto& [src, idx] : BatchProbes(held, rounds, first, count, {})) {
          for (size_t i : idx) {
            EXPECT_EQ(plan[i].src, src);
            senders_of[plan[i].dst].insert(src);
            ++seen[i];
          }
        }
        for (const auto& [dst, senders] : senders_of) {
          EXPECT_LE(senders.size(), count) << n << " nodes, " << dst;
        }
      }
      for (size_t i = 0; i < plan.size(); ++i) EXPECT_EQ(seen[i], 1) << n << " nodes, probe " << i;
    }
  }
}

TEST(BatchProbes, LeavesOutPairsWithALostNode) {
  std::vector<std::string> nodes = {"n1", "n2", "n3", "n4"};
  std::vector<ReceiverInfo> receivers;
  for (const auto& n : nodes) receivers.push_back(Receiver(n, {29500}, {}));
  auto plan = PlanProbes(nodes, receivers, {29500});
  auto rounds = RoundRobinRounds(nodes);
  ProbePlan held(nodes, receivers, {29500});
  for (const auto& [src, idx] : BatchProbes(held, rounds, 0, rounds.size(), {"n3"})) {
    EXPECT_NE(src, "n3");
    for (size_t i : idx) EXPECT_NE(plan[i].dst, "n3");
  }
}

TEST(ProbePhaseMs, CoversEveryRoundOfTimeoutsPlusSlack) {
  EXPECT_EQ(ProbePhaseMs(0, 256, 1500), 1500 + 10000);
  EXPECT_EQ(ProbePhaseMs(256, 256, 1500), 1500 + 10000);
  EXPECT_EQ(ProbePhaseMs(257, 256, 1500), 3000 + 10000);
}

TEST(EstimatePorts, ReadsPortsWindowAndTimeout) {
  PortsSettings s;  // 29500, 8 ephemeral samples, window 8, 2 s
  PortsEstimate e = EstimatePorts(s, 22, 31);
  EXPECT_EQ(e.ports_per_pair, 10u);
  EXPECT_EQ(e.batches, 4u);                      // 31 rounds, 8 at a time
  EXPECT_EQ(PortsPerPair(s, std::nullopt), 9u);  // local transport: no ssh port
  s.senders_per_receiver = 4;
  EXPECT_EQ(EstimatePorts(s, 22, 31).batches, 8u);
  EXPECT_GT(EstimatePorts(s, 22, 31).healthy_s, e.healthy_s);
  PortsSettings slow;
  slow.timeout_ms = 5000;
  EXPECT_GT(EstimatePorts(slow, 22, 31).worst_s, e.worst_s);
  EXPECT_EQ(EstimatePorts(slow, 22, 31).healthy_s, e.healthy_s);
  EXPECT_EQ(EstimatePorts(s, 22, 0).batches, 0u);
}

}  // namespace
}  // namespace cc
