#include "orchestrator/stages/nics/nics_confirm.h"

#include <gtest/gtest.h>

#include <set>

namespace cc {
namespace {

NicInfo Nic(const std::string& addr) {
  NicInfo n;
  n.name = "eth0";
  n.kind = "physical";
  n.operstate = "up";
  n.mtu = 9000;
  n.addresses = {addr};
  return n;
}

// Four nodes on 10.1.0.0/24, every ordered pair probed and passing.
struct Four {
  std::vector<NodeNics> nodes;
  std::vector<NicProbe> probes;
  Four() {
    for (int i = 1; i <= 4; ++i) {
      nodes.push_back({"n" + std::to_string(i), {Nic("10.1.0." + std::to_string(i) + "/24")}, {}});
    }
    for (int a = 1; a <= 4; ++a) {
      for (int b = 1; b <= 4; ++b) {
        if (a == b) continue;
        NicProbe p;
        p.src = "n" + std::to_string(a);
        p.dst = "n" + std::to_string(b);
        p.subnet = "10.1.0.0/24";
        p.addr = "10.1.0." + std::to_string(b);
        p.tcp_state = "open";
        p.answered_by = p.dst;
        p.mtu_bytes = 9000;
        p.mtu_state = "ok";
        probes.push_back(p);
      }
    }
  }
  size_t Index(const std::string& src, const std::string& dst) const {
    for (size_t i = 0; i < probes.size(); ++i) {
      if (probes[i].src == src && probes[i].dst == dst) return i;
    }
    return probes.size();
  }
  void Fail(std::vector<NicProbe>& ps, const std::string& src, const std::string& dst) const {
    ps[Index(src, dst)].tcp_state = "filtered";
    ps[Index(src, dst)].answered_by = "";
  }
};

TEST(NicsConfirm, OnlyFailuresAreRetestedInRoundsWhereNoNodeIsTwice) {
  Four c;
  c.Fail(c.probes, "n1", "n4");
  c.Fail(c.probes, "n2", "n4");
  c.Fail(c.probes, "n3", "n2");
  auto rounds = NicsRetestRounds(c.probes, SelectNics(c.nodes, c.probes));
  size_t total = 0;
  for (const auto& round : rounds) {
    std::set<std::string> busy;
    for (size_t i : round) {
      EXPECT_TRUE(busy.insert(c.probes[i].src).second)
          << "round with " << c.probes[i].src << " twice";
      EXPECT_TRUE(busy.insert(c.probes[i].dst).second)
          << "round with " << c.probes[i].dst << " twice";
      EXPECT_EQ(c.probes[i].tcp_state, "filtered");
      ++total;
    }
  }
  EXPECT_EQ(total, 3u);
  EXPECT_GE(rounds.size(), 2u) << "n1>n4 and n2>n4 share a receiver";
  std::vector<bool> skip(c.probes.size(), false);
  skip[c.Index("n3", "n2")] = true;
  size_t left = 0;
  for (const auto& round : NicsRetestRounds(c.probes, SelectNics(c.nodes, c.probes), skip)) {
    left += round.size();
  }
  EXPECT_EQ(left, 2u) << "an untestable probe is not retested";
}

TEST(NicsConfirm, AFailureThatPassesOnRetestIsFlakyAndAccusesNoNode) {
  Four c;
  std::vector<NicProbe> first = c.probes;
  c.Fail(first, "n1", "n4");
  c.Fail(first, "n2", "n4");
  c.Fail(first, "n3", "n4");
  std::map<size_t, NicProbe> retests;
  for (const char* s : {"n1", "n2", "n3"}) retests[c.Index(s, "n4")] = c.probes[c.Index(s, "n4")];
  NicSelection on_first = SelectNics(c.nodes, first);
  EXPECT_EQ(on_first.subnets[0].healthy.size(), 3u) << "on the first attempt n4 looks unreachable";
  NicSelection sel = SelectNicsByPointer(c.nodes, LatestProbes(first, retests));
  EXPECT_EQ(sel.subnets[0].healthy.size(), 4u);
  RetestCounts counts;
  std::vector<PairResult> rs = ConfirmedNicsResults(first, retests, sel, &counts);
  EXPECT_EQ(counts.retested, 3);
  EXPECT_EQ(counts.flaky, 3);
  int warned = 0;
  for (const PairResult& r : rs) {
    EXPECT_NE(r.outcome, Outcome::kFail) << r.src << ">" << r.dst << " " << r.check;
    if (r.outcome == Outcome::kWarn) {
      ++warned;
      EXPECT_TRUE(IsFlaky(r));
      EXPECT_EQ(r.evidence["attempts"].size(), 2u);
    }
  }
  EXPECT_EQ(warned, 3) << "the three tcp results; their MTU results were skipped, not failed";
}

TEST(NicsConfirm, AFailureThatRepeatsIsConfirmedAndARetestThatCouldNotRunIsUnconfirmed) {
  Four c;
  std::vector<NicProbe> first = c.probes;
  c.Fail(first, "n1", "n4");
  c.Fail(first, "n2", "n4");
  std::map<size_t, NicProbe> retests;
  retests[c.Index("n1", "n4")] = first[c.Index("n1", "n4")];
  NicProbe broken = first[c.Index("n2", "n4")];
  broken.tcp_state = "error";
  broken.note = "n2's agent did not report";
  retests[c.Index("n2", "n4")] = broken;
  std::vector<const NicProbe*> latest = LatestProbes(first, retests);
  EXPECT_EQ(latest[c.Index("n2", "n4")]->tcp_state, "filtered") << "an error is no measurement";
  EXPECT_EQ(latest[c.Index("n1", "n4")], &retests[c.Index("n1", "n4")]);
  EXPECT_EQ(latest[c.Index("n1", "n2")], &first[c.Index("n1", "n2")]);
  RetestCounts counts;
  std::vector<PairResult> rs =
      ConfirmedNicsResults(first, retests, SelectNicsByPointer(c.nodes, latest), &counts);
  EXPECT_EQ(counts.confirmed, 1);
  EXPECT_EQ(counts.unconfirmed, 1);
  for (const PairResult& r : rs) {
    if (r.check.rfind("tcp:", 0) != 0 || r.dst != "n4" || r.src == "n3") continue;
    EXPECT_EQ(r.outcome, Outcome::kFail) << r.src;
    EXPECT_EQ(r.evidence["confirmation"], r.src == "n1" ? kConfirmed : kUnconfirmed) << r.src;
  }
}

// Four nodes on two networks, 10.1.0.0/24 and 10.2.0.0/24, every ordered
// pair probed on both and passing.
struct FourOnTwo : Four {
  FourOnTwo() {
    for (NodeNics& n : nodes) {
      NicInfo second = Nic("10.2.0." + n.node.substr(1) + "/24");
      second.name = "eth1";
      n.nics.push_back(second);
    }
    size_t one = probes.size();
    for (size_t i = 0; i < one; ++i) {
      NicProbe p = probes[i];
      p.subnet = "10.2.0.0/24";
      p.addr = "10.2.0." + p.dst.str().substr(1);
      p.src_nic = p.dst_nic = "eth1";
      probes.push_back(p);
    }
  }
  size_t OnSecond(const std::string& src, const std::string& dst) const {
    for (size_t i = 0; i < probes.size(); ++i) {
      if (probes[i].src == src && probes[i].dst == dst && probes[i].subnet == "10.2.0.0/24") {
        return i;
      }
    }
    return probes.size();
  }
};

TEST(NicsConfirm, AFailureOnANetworkNotChosenIsRetestedToo) {
  FourOnTwo c;
  std::vector<NicProbe> first = c.probes;
  first[c.OnSecond("n1", "n3")].tcp_state = "filtered";
  first[c.OnSecond("n1", "n3")].answered_by = "";
  first[c.OnSecond("n2", "n4")].tcp_state = "filtered";
  first[c.OnSecond("n2", "n4")].answered_by = "";
  NicSelection sel = SelectNics(c.nodes, first);
  ASSERT_EQ(sel.subnet.value_or(""), "10.1.0.0/24");
  size_t total = 0;
  for (const auto& round : NicsRetestRounds(first, sel)) {
    for (size_t i : round) {
      EXPECT_EQ(first[i].subnet, "10.2.0.0/24");
      ++total;
    }
  }
  EXPECT_EQ(total, 2u) << "both warns, on the network not chosen";
  // n1>n3 passes on its retest (flaky), n2>n4 fails again (confirmed, still a warn).
  std::map<size_t, NicProbe> retests;
  retests[c.OnSecond("n1", "n3")] = c.probes[c.OnSecond("n1", "n3")];
  retests[c.OnSecond("n2", "n4")] = first[c.OnSecond("n2", "n4")];
  RetestCounts counts;
  for (const PairResult& r : ConfirmedNicsResults(first, retests, sel, &counts)) {
    if (r.check != "tcp:10.2.0.0/24") continue;
    if (r.src == "n1" && r.dst == "n3") {
      EXPECT_EQ(r.outcome, Outcome::kWarn);
      EXPECT_EQ(r.evidence["confirmation"], kFlaky);
    } else if (r.src == "n2" && r.dst == "n4") {
      EXPECT_EQ(r.outcome, Outcome::kWarn);
      EXPECT_EQ(r.evidence["confirmation"], kConfirmed);
      EXPECT_EQ(r.evidence["attempts"].size(), 2u);
    } else {
      EXPECT_EQ(r.outcome, Outcome::kPass) << r.src << ">" << r.dst;
    }
  }
  EXPECT_EQ(counts.retested, 2);
  EXPECT_EQ(counts.flaky, 1);
  EXPECT_EQ(counts.confirmed, 1);
}

TEST(ConfirmNics, AWarnIsMergedAtItsOwnSeverity) {
  PairResult first;
  first.outcome = Outcome::kWarn;
  first.state = "filtered";
  first.message = "no answer";
  PairResult again = first;
  EXPECT_EQ(ConfirmNics(first, again).evidence["confirmation"], kConfirmed);
  EXPECT_EQ(ConfirmNics(first, again).outcome, Outcome::kWarn);
  PairResult pass;
  pass.outcome = Outcome::kPass;
  EXPECT_EQ(ConfirmNics(first, pass).evidence["confirmation"], kFlaky);
  PairResult error;
  error.outcome = Outcome::kError;
  EXPECT_EQ(ConfirmNics(first, error).evidence["confirmation"], kUnconfirmed);
  EXPECT_EQ(ConfirmNics(first, error).outcome, Outcome::kWarn);
  PairResult fail = first;
  fail.outcome = Outcome::kFail;
  EXPECT_EQ(ConfirmNics(fail, pass).outcome, Outcome::kWarn);  // Confirm(): flaky
  EXPECT_EQ(ConfirmNics(fail, pass).evidence["confirmation"], kFlaky);
}

// n4 reaches no peer (its replies are dropped): a node's own failure.
// Retesting it with every peer would wait every timeout again.
TEST(NicsConfirm, ANodeFailingWithEveryPeerIsRetestedWithAFewPeersOnly) {
  Four c;
  for (const char* peer : {"n1", "n2", "n3"}) c.Fail(c.probes, "n4", peer);
  const NicSelection sel = SelectNics(c.nodes, c.probes);
  NicsRetestPlan plan = PlanNicsRetests(c.probes, sel);
  size_t retested = 0;
  for (const auto& round : plan.rounds) retested += round.size();
  EXPECT_EQ(retested, kSampledPeers);
  ASSERT_EQ(plan.sampled.size(), 3 - kSampledPeers);
  EXPECT_EQ(plan.samples.size(), kSampledPeers);
  EXPECT_EQ(plan.sampled_node.begin()->second, "n4");
  // The samples fail again: the rest is confirmed by them, saying so.
  std::map<size_t, NicProbe> retests;
  for (const auto& round : plan.rounds) {
    for (size_t i : round) retests[i] = c.probes[i];
  }
  auto words = NotRetestedConfirmations(plan, c.probes, retests, sel);
  const size_t rest = plan.sampled.begin()->first;
  ASSERT_TRUE(words.count(rest));
  EXPECT_EQ(words[rest]["confirmation"], kConfirmed);
  EXPECT_NE(words[rest]["confirmed_by"].get<std::string>().find("n4 fails with every peer"),
            std::string::npos);
  auto results = ConfirmedNicsResults(c.probes, retests, sel, nullptr, words);
  bool seen = false;
  for (const auto& r : results) {
    if (r.src == c.probes[rest].src && r.dst == c.probes[rest].dst &&
        r.check.rfind("tcp", 0) == 0) {
      EXPECT_EQ(r.evidence.value("confirmation", ""), kConfirmed) << r.evidence.dump();
      seen = true;
    }
  }
  EXPECT_TRUE(seen);
  // A sample that passes: the node's pattern is not established.
  for (auto& [i, p] : retests) {
    p.tcp_state = "open";
    p.answered_by = p.dst;
    break;
  }
  words = NotRetestedConfirmations(plan, c.probes, retests, sel);
  EXPECT_EQ(words[rest]["confirmation"], kUnconfirmed);
}

TEST(NicsConfirm, AFailureTheNodesOwnInterfaceExplainsIsNotRetested) {
  Four c;
  c.nodes[3].nics[0].operstate = "down";
  for (const char* peer : {"n1", "n2", "n3"}) {
    c.Fail(c.probes, "n4", peer);
    c.Fail(c.probes, peer, "n4");
  }
  const NicSelection sel = SelectNics(c.nodes, c.probes);
  NicsRetestPlan plan = PlanNicsRetests(c.probes, sel);
  EXPECT_TRUE(plan.rounds.empty());
  EXPECT_EQ(plan.explained.size(), 6u);
  auto words = NotRetestedConfirmations(plan, c.probes, {}, sel);
  ASSERT_EQ(words.size(), 6u);
  EXPECT_EQ(words.begin()->second["confirmation"], kConfirmed);
}

}  // namespace
}  // namespace cc
