#include "orchestrator/analysis/causes.h"

#include <gtest/gtest.h>

#include "orchestrator/analysis/analysis.h"

namespace cc {
namespace {

using nlohmann::json;

PairResult Pair(const std::string& src, const std::string& dst, Outcome o) {
  PairResult r;
  r.stage = "nccl";
  r.src = src;
  r.dst = dst;
  r.check = "allreduce";
  r.outcome = o;
  r.message = o == Outcome::kPass ? "ok" : "NCCL timed out";
  return r;
}

NodeResult Xid79(const std::string& node) {
  NodeResult r = NodeCheck("health", node, "xid.79", Outcome::kFail,
                           "Xid 79 on PCI:0000:18:00: GPU has fallen off the bus",
                           json{{"action", "reboot"}, {"gpu", 0}}, "Xid 79");
  return r;
}

// Four nodes; n2's GPU fell off the bus and every pair with n2 fails in
// nccl. Without the rule, n2 is a bad node of nccl; with it, the health
// verdict comes first, explains those pairs, and no partner is named.
RunData Cluster() {
  RunData d;
  d.run.meta = {{"nodes", {"n1", "n2", "n3", "n4"}}};
  d.node_results.push_back(Xid79("n2"));
  const char* nodes[] = {"n1", "n2", "n3", "n4"};
  for (const char* a : nodes) {
    for (const char* b : nodes) {
      if (std::string(a) >= b) continue;
      bool bad = std::string(a) == "n2" || std::string(b) == "n2";
      d.pair_results.push_back(Pair(a, b, bad ? Outcome::kFail : Outcome::kPass));
    }
  }
  return d;
}

TEST(Causes, ARebootVerdictLeadsAndExplainsItsPairs) {
  auto vs = Analyze(Cluster());
  ASSERT_FALSE(vs.empty());
  EXPECT_EQ(vs[0].kind, "unhealthy");
  EXPECT_EQ(vs[0].nodes, std::vector<std::string>{"n2"});
  EXPECT_EQ(vs[0].cause, CauseScope::kNode);
  EXPECT_EQ(vs[0].failing_pairs_explained, 3u) << vs[0].summary;
  EXPECT_NE(vs[0].summary.find("this also explains 3 failing pair results"), std::string::npos)
      << vs[0].summary;
  for (size_t i = 1; i < vs.size(); ++i) {
    EXPECT_TRUE(vs[i].stage != "nccl") << "a partner was accused: " << vs[i].summary;
  }
}

TEST(Causes, AGpuResetIsNoCauseAndDoesNotTakeTheNodeOut) {
  RunData d = Cluster();
  d.node_results[0].evidence["action"] = "reset-gpu";
  auto vs = Analyze(d);
  bool nccl_named = false;
  for (const auto& v : vs) nccl_named |= v.stage == "nccl";
  EXPECT_TRUE(nccl_named);  // the pair rules see n2's pairs again
}

TEST(Causes, OnlyFailingOrHungVerdictsWithACauseScopeAreCauses) {
  Verdict v;
  v.severity = Outcome::kFail;
  v.cause = CauseScope::kNode;
  EXPECT_TRUE(analysis::IsCause(v));
  v.severity = Outcome::kWarn;
  EXPECT_FALSE(analysis::IsCause(v));
  v.severity = Outcome::kFail;
  v.cause = CauseScope::kNone;
  v.evidence = {{"action", "drain"}};  // a key alone makes no cause
  EXPECT_FALSE(analysis::IsCause(v));
}

// A stage's cause as it stores it (StageContext::RecordCause).
Verdict StoredCause(const std::string& stage, const std::string& kind,
                    std::vector<std::string> nodes, const std::string& fix) {
  Verdict v;
  v.stage = stage;
  v.kind = kind;
  v.check = "selected";
  v.nodes = std::move(nodes);
  v.summary = v.nodes[0] + ": eth0 has prefix length /30, the rest of 10.0.0.0/24 has /24";
  v.next_step = fix;
  v.cause = CauseScope::kNode;
  return v;
}

// n4's address has the wrong prefix: nics says so (a cause); nics' own
// pairs with n4 fail, ports names five bad links with n4, and the mpi job
// failed on every node naming n4's interface. One verdict remains.
RunData WrongPrefix() {
  RunData d;
  d.run.meta = {{"nodes", {"n1", "n2", "n3", "n4", "n5", "n6"}}};
  d.node_results.push_back(NodeCheck("connect", "n1", "agent", Outcome::kPass, "ok"));
  d.node_results.push_back(NodeCheck("nics", "n4", "selected", Outcome::kFail,
                                     "n4: eth0 10.0.0.4/30 has prefix length /30"));
  d.verdicts.push_back(
      StoredCause("nics", "wrong-prefix", {"n4"}, "set eth0 on n4 to 10.0.0.4/24"));
  const char* nodes[] = {"n1", "n2", "n3", "n4", "n5", "n6"};
  for (const char* a : nodes) {
    for (const char* b : nodes) {
      if (std::string(a) == b) continue;
      bool bad = std::string(a) == "n4" || std::string(b) == "n4";
      PairResult r = Pair(a, b, bad ? Outcome::kFail : Outcome::kPass);
      r.stage = "nics";
      r.check = "tcp:10.0.0.0/24";
      d.pair_results.push_back(r);
    }
  }
  for (const char* peer : {"n1", "n2", "n3", "n5", "n6"}) {
    Verdict link;
    link.kind = "bad-link";
    link.stage = "ports";
    link.check = "tcp/22";
    link.nodes = {"n4", peer};
    link.pairs = {{"n4", peer}, {peer, "n4"}};
    link.summary = std::string("n4 and ") + peer + " fail both ways";
    link.next_step = "check the cables";
    link.cause = CauseScope::kLink;
    d.verdicts.push_back(link);
  }
  return d;
}

TEST(Causes, OneWrongPrefixIsTheOnlyVerdictAndCountsWhatItExplains) {
  auto vs = Analyze(WrongPrefix());
  ASSERT_EQ(vs.size(), 1u) << VerdictsToJson(vs).dump(1);
  EXPECT_EQ(vs[0].kind, "wrong-prefix");
  EXPECT_EQ(vs[0].next_step, "set eth0 on n4 to 10.0.0.4/24");
  // The five ports links; nics' restated node check is the cause itself.
  EXPECT_EQ(vs[0].explains.size(), 5u);
  EXPECT_EQ(vs[0].failing_pairs_explained, 10u);  // nics' pairs with n4, both ways
  EXPECT_NE(vs[0].summary.find("this also explains 10 failing pair results and 5 other verdicts "
                               "(ports)"),
            std::string::npos)
      << vs[0].summary;
}

TEST(Causes, ACauseSaysWhatTheStagesThatLeftItsNodeOutFoundOnTheRest) {
  RunData d = WrongPrefix();
  d.node_results.push_back(NodeCheck("mpi", "n4", "launch", Outcome::kSkip,
                                     "not tested: n4: eth0 has the wrong prefix", {}, "contained"));
  for (const char* n : {"n1", "n2", "n3", "n5", "n6"}) {
    d.node_results.push_back(NodeCheck("mpi", n, "allreduce", Outcome::kPass, "exact"));
  }
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << VerdictsToJson(vs).dump(1);
  EXPECT_NE(vs[0].summary.find("; without it, mpi passed on the other 5 nodes"), std::string::npos)
      << vs[0].summary;
  d.node_results.back().outcome = Outcome::kFail;
  vs = Analyze(d);
  ASSERT_FALSE(vs.empty());
  EXPECT_NE(vs[0].summary.find("mpi still fails on 1 of the other 5 nodes"), std::string::npos)
      << vs[0].summary;
}

TEST(Causes, AFindingOutsideTheCausesScopeStaysItsOwnVerdict) {
  RunData d = WrongPrefix();
  for (auto& r : d.pair_results) {
    if (r.src == "n1" && r.dst == "n2") r.outcome = Outcome::kFail;
    if (r.src == "n2" && r.dst == "n1") r.outcome = Outcome::kFail;
  }
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 2u) << VerdictsToJson(vs).dump(1);
  EXPECT_EQ(vs[0].kind, "wrong-prefix");
  EXPECT_EQ(vs[1].kind, "bad-link");
  EXPECT_EQ(vs[1].nodes, (std::vector<std::string>{"n1", "n2"}));
}

TEST(Causes, AnEarlierStagesCauseExplainsALaterStagesCauseOnTheSameNode) {
  RunData d = WrongPrefix();
  Verdict isolated = StoredCause("ports", "firewall", {"n4"}, "look at n4's INPUT chain");
  isolated.check = "tcp/22";
  d.verdicts.push_back(isolated);
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << VerdictsToJson(vs).dump(1);
  EXPECT_EQ(vs[0].stage, "nics");
  EXPECT_EQ(vs[0].explains.size(), 6u);
}

TEST(Causes, ALinkCauseExplainsOnlyItsOwnPair) {
  RunData d;
  d.run.meta = {{"nodes", {"n1", "n2", "n3"}}};
  d.node_results.push_back(NodeCheck("connect", "n1", "agent", Outcome::kPass, "ok"));
  Verdict oneway;
  oneway.kind = "firewall";
  oneway.stage = "ports";
  oneway.check = "tcp/22";
  oneway.nodes = {"n1", "n2"};
  oneway.pairs = {{"n1", "n2"}};
  oneway.summary = "n2 drops new tcp from n1";
  oneway.cause = CauseScope::kLink;
  d.verdicts.push_back(oneway);
  d.pair_results.push_back(Pair("n1", "n2", Outcome::kFail));
  d.pair_results.push_back(Pair("n1", "n3", Outcome::kPass));
  d.pair_results.push_back(Pair("n2", "n3", Outcome::kPass));
  // nics, a pair stage, judged n1 alone: "n1 does not reach n2".
  d.node_results.push_back(
      NodeCheck("nccl", "n1", "selected", Outcome::kFail, "does not reach n2"));
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << VerdictsToJson(vs).dump(1);
  EXPECT_EQ(vs[0].kind, "firewall");
  EXPECT_EQ(vs[0].failing_pairs_explained, 1u);
  ASSERT_EQ(vs[0].explains.size(), 1u);
  EXPECT_EQ(vs[0].explains[0].check, "selected");
  // A node stage's finding on the same node is its own.
  d.node_results.push_back(NodeCheck("health", "n1", "xid.79", Outcome::kFail, "Xid 79"));
  vs = Analyze(d);
  EXPECT_EQ(vs.size(), 2u) << VerdictsToJson(vs).dump(1);
}

}  // namespace
}  // namespace cc
