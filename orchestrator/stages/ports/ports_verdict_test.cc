#include "orchestrator/stages/ports/ports_verdict.h"

#include <gtest/gtest.h>

#include <functional>

namespace cc {
namespace {

using StateFn = std::function<std::string(int src, int dst, int port)>;

std::string Name(int i) { return "node" + std::to_string(i); }

std::vector<std::string> Nodes(int n) {
  std::vector<std::string> out;
  for (int i = 1; i <= n; ++i) out.push_back(Name(i));
  return out;
}

Outcome OutcomeOf(const std::string& state) {
  if (state == "open") return Outcome::kPass;
  if (state == "in-use") return Outcome::kWarn;
  if (state == "error") return Outcome::kError;
  return Outcome::kFail;
}

// Every ordered pair of n nodes on ssh 22, listed 29500 and an ephemeral
// sample {40000, 50000}; `state` says what each probe found.
std::vector<PortCell> Matrix(int n, const StateFn& state) {
  std::vector<PortCell> out;
  for (int s = 1; s <= n; ++s) {
    for (int d = 1; d <= n; ++d) {
      if (s == d) continue;
      for (auto [port, kind] :
           {std::pair{22, PortKind::kSsh}, std::pair{29500, PortKind::kListed},
            std::pair{40000, PortKind::kEphemeral}, std::pair{50000, PortKind::kEphemeral}}) {
        std::string st = state(s, d, port);
        out.push_back({Name(s), Name(d), port, kind, st, OutcomeOf(st)});
      }
    }
  }
  return out;
}

std::map<std::string, std::pair<int, int>> Ranges(int n) {
  std::map<std::string, std::pair<int, int>> out;
  for (int i = 1; i <= n; ++i) out[Name(i)] = {32768, 60999};
  return out;
}

std::vector<PortVerdict> Attribute(int n, const StateFn& state) {
  return AttributePorts(Nodes(n), Matrix(n, state), Ranges(n));
}

std::string Kinds(const std::vector<PortVerdict>& vs) {
  std::string out;
  for (const auto& v : vs) out += (out.empty() ? "" : ",") + v.kind;
  return out;
}

TEST(AttributePorts, AllOpenGivesNoVerdict) {
  EXPECT_TRUE(Attribute(5, [](int, int, int) { return "open"; }).empty());
}

TEST(AttributePorts, AReceiverThatDropsAPortFromEveryPeerIsNamedWithItsInputChain) {
  auto vs = Attribute(
      6, [](int, int d, int port) { return d == 3 && port == 29500 ? "filtered" : "open"; });
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "receiver");
  EXPECT_EQ(vs[0].nodes, std::vector<std::string>{"node3"});
  EXPECT_EQ(vs[0].ports, std::vector<int>{29500});
  EXPECT_EQ(vs[0].message, "node3 drops tcp/29500 from every peer: INPUT firewall on node3");
  EXPECT_EQ(vs[0].pairs.size(), 5u);
  EXPECT_EQ(vs[0].severity, Outcome::kFail);
}

TEST(AttributePorts, ARefusingReceiverAndADroppingOneAreSeparateVerdicts) {
  auto vs = Attribute(8, [](int, int d, int port) {
    if (port != 29500) return "open";
    return d == 3 ? "filtered" : d == 5 ? "refused" : "open";
  });
  ASSERT_EQ(vs.size(), 2u) << Kinds(vs);
  std::map<std::string, std::string> by_node;
  for (const auto& v : vs) by_node[v.nodes.at(0)] = v.message;
  EXPECT_NE(by_node["node3"].find("drops tcp/29500"), std::string::npos);
  EXPECT_NE(by_node["node5"].find("refuses tcp/29500"), std::string::npos);
  EXPECT_NE(by_node["node5"].find("REJECT"), std::string::npos);
}

TEST(AttributePorts, ReceiversAlikeFoldIntoOneVerdict) {
  auto vs = Attribute(8, [](int, int d, int port) {
    return (d == 3 || d == 4) && port == 29500 ? "filtered" : "open";
  });
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].message, "node[3-4] drop tcp/29500 from every peer: INPUT firewall on node[3-4]");
}

TEST(AttributePorts, ASenderThatReachesNoOneIsNotBlamedOnItsPeers) {
  auto vs = Attribute(5, [](int s, int, int) { return s == 4 ? "filtered" : "open"; });
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "sender");
  EXPECT_EQ(vs[0].nodes, std::vector<std::string>{"node4"});
  EXPECT_EQ(vs[0].message.rfind("node4 reaches no peer on any port", 0), 0u) << vs[0].message;
  EXPECT_NE(vs[0].message.find("OUTPUT firewall or routing on node4"), std::string::npos);
}

TEST(AttributePorts, ANodeCutOffBothWaysIsIsolated) {
  auto vs = Attribute(5, [](int s, int d, int) { return s == 2 || d == 2 ? "filtered" : "open"; });
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "isolated");
  EXPECT_EQ(vs[0].nodes, std::vector<std::string>{"node2"});
}

TEST(AttributePorts, AReceiverThatAcceptsNothingIsOneVerdictNotOnePerPort) {
  auto vs = Attribute(5, [](int, int d, int) { return d == 5 ? "filtered" : "open"; });
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "receiver");
  EXPECT_NE(vs[0].message.find("node5 accepts no port from any peer"), std::string::npos);
}

TEST(AttributePorts, OneDirectionOfOnePairIsAOneWayVerdictNamingBothChains) {
  auto vs = Attribute(6, [](int s, int d, int) { return s == 1 && d == 2 ? "filtered" : "open"; });
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "one-way");
  EXPECT_EQ(vs[0].nodes, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(vs[0].pairs, (std::vector<std::pair<std::string, std::string>>{{"node1", "node2"}}));
  EXPECT_EQ(vs[0].message.rfind("node1 → node2 fails but node2 → node1 works: node1's OUTPUT or "
                                "node2's INPUT filters that direction",
                                0),
            0u)
      << vs[0].message;
}

TEST(AttributePorts, APairFailingBothWaysIsASinglePairVerdict) {
  auto vs = Attribute(6, [](int s, int d, int port) {
    return ((s == 2 && d == 5) || (s == 5 && d == 2)) && port == 29500 ? "refused" : "open";
  });
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "pair");
  EXPECT_EQ(vs[0].nodes, (std::vector<std::string>{"node2", "node5"}));
  EXPECT_NE(vs[0].message.find("node2 ↔ node5 fail both ways on tcp/29500"), std::string::npos);
  EXPECT_EQ(vs[0].pairs.size(), 2u);
}

TEST(AttributePorts, WithTwoNodesAOneSidedFailureIsOneWayNotASenderVerdict) {
  auto vs = Attribute(2, [](int s, int, int) { return s == 1 ? "filtered" : "open"; });
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "one-way");
}

TEST(AttributePorts, ABlockedEphemeralRangeIsNamedWithWhyNcclNeedsIt) {
  auto vs = Attribute(
      8, [](int, int d, int port) { return d == 6 && port >= 40000 ? "filtered" : "open"; });
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "ephemeral");
  EXPECT_EQ(vs[0].nodes, std::vector<std::string>{"node6"});
  const std::string& m = vs[0].message;
  EXPECT_NE(m.find("node6 drops its ephemeral ports"), std::string::npos) << m;
  EXPECT_NE(m.find("NCCL opens its data sockets on ephemeral ports "
                   "(net.ipv4.ip_local_port_range 32768-60999); a firewall that allows only 22 "
                   "and 29500 lets the rendezvous succeed and breaks NCCL right after: open tcp "
                   "32768-60999 on node6"),
            std::string::npos)
      << m;
  EXPECT_EQ(vs[0].next_step.rfind("open tcp 32768-60999 on node6", 0), 0u);
}

TEST(AttributePorts, AnInputDropOfTheEphemeralRangeIsOneVerdictListingBothSymptoms) {
  // node6's INPUT drops tcp 32768-60999 without --syn: peers cannot reach
  // its ephemeral ports, and the replies to its own connections are lost.
  auto vs = Attribute(8, [](int s, int d, int port) {
    return (d == 6 && port >= 40000) || s == 6 ? "filtered" : "open";
  });
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  const PortVerdict& v = vs[0];
  EXPECT_EQ(v.kind, "ephemeral");
  EXPECT_EQ(v.nodes, std::vector<std::string>{"node6"});
  EXPECT_NE(v.message.find("node6's INPUT drops tcp 32768-60999"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("that one rule explains two symptoms"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("node6 reaches no peer on any port"), std::string::npos) << v.message;
  ASSERT_EQ(v.evidence["symptoms"].size(), 2u);
  EXPECT_EQ(v.evidence["symptoms"][0]["probes"], 7 * 2);  // 7 peers x 2 ephemeral ports
  EXPECT_EQ(v.evidence["symptoms"][1]["probes"], 7 * 4);  // node6's own probes
  EXPECT_EQ(v.evidence["rule"]["chain"], "INPUT");
  EXPECT_EQ(v.evidence["rule"]["ports"], "32768-60999");
  EXPECT_NE(v.next_step.find("open tcp 32768-60999 in the INPUT chain"), std::string::npos)
      << v.next_step;
  EXPECT_NE(v.next_step.find("on node6"), std::string::npos) << v.next_step;
}

TEST(AttributePorts, PartOfTheEphemeralRangeBlockedSaysHowMuch) {
  auto vs = Attribute(
      4, [](int, int d, int port) { return d == 2 && port == 50000 ? "filtered" : "open"; });
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "ephemeral");
  EXPECT_NE(vs[0].message.find("1 of 2 sampled ephemeral ports"), std::string::npos)
      << vs[0].message;
}

TEST(AttributePorts, APortBlockedOnEveryNodeIsOneClusterWideVerdict) {
  auto vs = Attribute(4, [](int, int, int port) { return port == 29500 ? "filtered" : "open"; });
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "port-everywhere");
  EXPECT_EQ(vs[0].nodes.size(), 4u);
}

TEST(AttributePorts, EverythingFailingIsOneVerdictAboutTheNetwork) {
  auto vs = Attribute(4, [](int, int, int) { return "unreachable"; });
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "nothing");
}

TEST(AttributePorts, APortHeldByAnotherProcessIsAWarningNamingTheNode) {
  auto vs = Attribute(
      8, [](int, int d, int port) { return d == 7 && port == 29500 ? "in-use" : "open"; });
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "in-use");
  EXPECT_EQ(vs[0].severity, Outcome::kWarn);
  EXPECT_EQ(vs[0].nodes, std::vector<std::string>{"node7"});
  EXPECT_NE(vs[0].message.find("tcp/29500 on node7 is held by another process"), std::string::npos);
}

TEST(AttributePorts, TheIssuesFaultsTogetherGiveOneVerdictEach) {
  // node3 drops 29500, node5 rejects it, node1 cannot send to node2,
  // node6 drops its ephemeral range, node7's 29500 is held by a server.
  auto vs = Attribute(8, [](int s, int d, int port) {
    if (s == 1 && d == 2) return "filtered";
    if (d == 3 && port == 29500) return "filtered";
    if (d == 5 && port == 29500) return "refused";
    if (d == 6 && port >= 40000) return "filtered";
    if (d == 7 && port == 29500) return "in-use";
    return "open";
  });
  std::map<std::string, std::string> kind_of;
  for (const auto& v : vs) kind_of[v.kind + ":" + v.nodes.at(0)] = v.message;
  EXPECT_EQ(vs.size(), 5u) << Kinds(vs);
  EXPECT_TRUE(kind_of.count("receiver:node3"));
  EXPECT_TRUE(kind_of.count("receiver:node5"));
  EXPECT_TRUE(kind_of.count("one-way:node1"));
  EXPECT_TRUE(kind_of.count("ephemeral:node6"));
  EXPECT_TRUE(kind_of.count("in-use:node7"));
}

TEST(AttributePorts, UntestedProbesAreNeitherBlamedNorCountedAsWorking) {
  auto cells = Matrix(4, [](int s, int d, int port) {
    if (s == 4) return "error";  // node4's agent never answered
    return d == 2 && port == 29500 ? "filtered" : "open";
  });
  auto vs = AttributePorts(Nodes(4), cells, Ranges(4));
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "receiver");
  EXPECT_EQ(vs[0].pairs.size(), 2u);  // node1, node3 -> node2
}

TEST(FormatTcpPorts, JoinsPortsAfterOnePrefix) {
  EXPECT_EQ(FormatTcpPorts({22, 29500}), "tcp/22,29500");
  EXPECT_EQ(FormatTcpPorts({}), "");
}

}  // namespace
}  // namespace cc
