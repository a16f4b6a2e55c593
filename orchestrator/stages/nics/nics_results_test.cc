#include "orchestrator/stages/nics/nics_results.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

using Json = nlohmann::json;

NicInfo Nic(const std::string& name, const std::string& addr, const std::string& oper = "up") {
  NicInfo n;
  n.name = name;
  n.kind = "physical";
  n.operstate = oper;
  n.mtu = 9000;
  n.addresses = {addr};
  return n;
}

TEST(NicsResults, AgentAnswersNameWhoAnswered) {
  std::map<std::string, std::string> tokens = {{"t-a", "a"}, {"t-b", "b"}};
  NicProbe open = ProbeFromAgent("a",
                                 {{"node", "b"},
                                  {"subnet", "10.1.0.0/24"},
                                  {"addr", "10.1.0.2"},
                                  {"state", "open"},
                                  {"mtu_bytes", 9000},
                                  {"mtu_state", "ok"}},
                                 tokens);
  EXPECT_EQ(open.answered_by, "b");
  EXPECT_EQ(open.mtu_bytes, 9000);
  NicProbe self =
      ProbeFromAgent("a", {{"node", "b"}, {"state", "open-other"}, {"reply", "t-a"}}, tokens);
  EXPECT_EQ(self.answered_by, "a");
  NicProbe stranger =
      ProbeFromAgent("a", {{"node", "b"}, {"state", "open-other"}, {"reply", "SSH-2.0"}}, tokens);
  EXPECT_EQ(stranger.answered_by, "");
  NicProbe empty = ProbeFromAgent("a", Json::object(), tokens);
  EXPECT_EQ(empty.tcp_state, "");
}

TEST(NicsResults, FailuresFailOnTheChosenSubnetAndExcludedOnesSkip) {
  std::vector<NodeNics> nodes = {
      {"a", {Nic("eth0", "10.1.0.1/24"), Nic("docker0", "172.17.0.1/16")}, {}},
      {"b", {Nic("eth0", "10.1.0.2/24"), Nic("docker0", "172.17.0.1/16")}, {}},
      {"c", {Nic("eth0", "10.1.0.3/24", "down")}, {}}};
  std::vector<NicProbe> probes;
  auto add = [&probes](std::string s, std::string d, std::string net, std::string st,
                       std::string by) {
    NicProbe p;
    p.src = s;
    p.dst = d;
    p.subnet = net;
    p.addr = d + "-addr";
    p.tcp_state = st;
    p.answered_by = by;
    p.mtu_bytes = 9000;
    p.mtu_state = st == "open" ? "ok" : "no-reply";
    probes.push_back(p);
  };
  add("a", "b", "10.1.0.0/24", "open", "b");
  add("b", "a", "10.1.0.0/24", "open", "a");
  add("a", "c", "10.1.0.0/24", "unreachable", "");
  add("a", "b", "172.17.0.0/16", "open-other", "a");
  NicSelection s = SelectNics(nodes, probes);
  ASSERT_EQ(s.subnet, "10.1.0.0/24");
  std::vector<PairResult> pr = NicsPairResults(probes, s);
  ASSERT_EQ(pr.size(), 8u);
  EXPECT_EQ(pr[0].check, "tcp:10.1.0.0/24");
  EXPECT_EQ(pr[0].outcome, Outcome::kPass);
  EXPECT_EQ(pr[1].check, "mtu:10.1.0.0/24");
  EXPECT_EQ(pr[1].value, 9000);
  EXPECT_EQ(pr[4].outcome, Outcome::kFail);
  EXPECT_EQ(pr[4].message, "c at c-addr: unreachable");
  EXPECT_EQ(pr[5].outcome, Outcome::kSkip) << "no MTU verdict where tcp failed";
  EXPECT_EQ(pr[6].outcome, Outcome::kSkip);
  EXPECT_NE(pr[6].message.find("excluded: decoy"), std::string::npos);

  std::vector<NodeResult> nr = NicsNodeResults({"a", "b", "c"}, s);
  std::map<std::string, const NodeResult*> by;
  for (const auto& r : nr) by[r.node + "/" + r.check] = &r;
  EXPECT_EQ(by.at("a/selected")->outcome, Outcome::kPass);
  EXPECT_EQ(by.at("a/selected")->value, "eth0 10.1.0.1");
  EXPECT_EQ(by.at("c/selected")->outcome, Outcome::kFail);
  EXPECT_NE(by.at("c/selected")->message.find("is down"), std::string::npos);
  EXPECT_EQ(by.at("*/excluded:172.17.0.0/16")->outcome, Outcome::kSkip);
  EXPECT_EQ(by.at("*/recommendation")->outcome, Outcome::kPass);
  EXPECT_EQ(by.at("*/recommendation")->value, "eth0");
  EXPECT_NE(by.at("*/recommendation")->message.find("export NCCL_SOCKET_IFNAME=eth0"),
            std::string::npos);
}

TEST(NicsResults, ADuplicateAddressLeavesItsPairsUntestedAndItsNodesFailWithTheFix) {
  std::vector<NodeNics> nodes;
  std::vector<NicProbe> probes;
  for (int i = 1; i <= 5; ++i) {
    std::string n = "n" + std::to_string(i);
    nodes.push_back({n, {Nic("eth0", "10.1.0." + std::to_string(i == 5 ? 4 : i) + "/24")}, {}});
  }
  for (int a = 1; a <= 5; ++a) {
    for (int b = 1; b <= 5; ++b) {
      if (a == b) continue;
      NicProbe p;
      p.src = "n" + std::to_string(a);
      p.dst = "n" + std::to_string(b);
      p.subnet = "10.1.0.0/24";
      p.addr = "10.1.0." + std::to_string(b == 5 ? 4 : b);
      p.tcp_state = "open";
      p.answered_by = b == 5 ? "n4" : p.dst;
      if (b == 5 && a != 4) p.tcp_state = "open-other";
      probes.push_back(p);
    }
  }
  NicSelection s = SelectNics(nodes, probes);
  ASSERT_EQ(s.subnet, "10.1.0.0/24") << s.reason;
  for (const PairResult& r : NicsPairResults(probes, s)) {
    bool dup = r.src == "n4" || r.src == "n5" || r.dst == "n4" || r.dst == "n5";
    EXPECT_EQ(r.outcome, dup ? Outcome::kSkip : Outcome::kPass) << r.src << ">" << r.dst;
    if (dup) {
      EXPECT_NE(r.message.find("untested: n"), std::string::npos) << r.message;
    }
  }
  std::map<std::string, NodeResult> by;
  for (const auto& r : NicsNodeResults({"n1", "n2", "n3", "n4", "n5"}, s))
    by[r.node + "/" + r.check] = r;
  EXPECT_EQ(by.at("n1/selected").outcome, Outcome::kPass);
  EXPECT_FALSE(by.at("n1/selected").evidence.contains("next_step"));
  for (const char* n : {"n4", "n5"}) {
    const NodeResult& r = by.at(std::string(n) + "/selected");
    EXPECT_EQ(r.outcome, Outcome::kFail) << n;
    EXPECT_EQ(r.evidence.value("next_step", ""),
              "give n[4-5] distinct addresses on 10.1.0.0/24 (they share 10.1.0.4; 10.1.0.5 is "
              "free)");
  }
  // One cause for the address they share, naming both and the fix once.
  std::vector<Verdict> causes = NicsCauses(s);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].kind, "duplicate-address");
  EXPECT_EQ(causes[0].cause, CauseScope::kNode);
  EXPECT_EQ(causes[0].check, "selected");
  EXPECT_EQ(causes[0].nodes, (std::vector<std::string>{"n4", "n5"}));
  EXPECT_EQ(causes[0].next_step,
            "give n[4-5] distinct addresses on 10.1.0.0/24 (they share 10.1.0.4; 10.1.0.5 is "
            "free)");
}

TEST(NicsResults, AnInterfaceDownIsALinkDownCauseOfItsNodeAndAHealthyNetworkHasNone) {
  std::vector<NodeNics> nodes;
  std::vector<NicProbe> probes;
  for (int i = 1; i <= 4; ++i) {
    std::string n = "n" + std::to_string(i);
    nodes.push_back(
        {n, {Nic("eth0", "10.1.0." + std::to_string(i) + "/24", i == 3 ? "down" : "up")}, {}});
  }
  for (int a = 1; a <= 4; ++a) {
    for (int b = 1; b <= 4; ++b) {
      if (a == b) continue;
      NicProbe p;
      p.src = "n" + std::to_string(a);
      p.dst = "n" + std::to_string(b);
      p.subnet = "10.1.0.0/24";
      p.addr = "10.1.0." + std::to_string(b);
      bool down = a == 3 || b == 3;
      p.tcp_state = down ? "filtered" : "open";
      p.answered_by = down ? "" : p.dst;
      probes.push_back(p);
    }
  }
  NicSelection s = SelectNics(nodes, probes);
  ASSERT_EQ(s.subnet, "10.1.0.0/24") << s.reason;
  std::vector<Verdict> causes = NicsCauses(s);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].kind, "link-down");
  EXPECT_EQ(causes[0].nodes, (std::vector<std::string>{"n3"}));
  EXPECT_FALSE(causes[0].next_step.empty());
  nodes[2].nics[0].operstate = "up";
  for (auto& p : probes) {
    p.tcp_state = "open";
    p.answered_by = p.dst;
  }
  EXPECT_TRUE(NicsCauses(SelectNics(nodes, probes)).empty());
}

TEST(NicsResults, NothingToRecommendFailsWithTheReason) {
  NicSelection s = SelectNics({}, {});
  std::vector<NodeResult> nr = NicsNodeResults({}, s);
  ASSERT_EQ(nr.size(), 1u);
  EXPECT_EQ(nr[0].check, "recommendation");
  EXPECT_EQ(nr[0].outcome, Outcome::kFail);
  EXPECT_EQ(nr[0].message, "no network to recommend: no nodes");
}

}  // namespace
}  // namespace cc
