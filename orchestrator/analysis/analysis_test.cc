#include "orchestrator/analysis/analysis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace cc {
namespace {

RunData Cluster(int n) {
  RunData d;
  d.run.id = 7;
  std::vector<std::string> names;
  for (int i = 1; i <= n; ++i) names.push_back("n" + std::to_string(i));
  d.run.meta["nodes"] = names;
  return d;
}

void AddPair(RunData& d, const std::string& stage, const std::string& check, const std::string& src,
             const std::string& dst, Outcome o, std::optional<double> value = std::nullopt,
             const std::string& state = "") {
  PairResult r;
  r.stage = stage;
  r.check = check;
  r.src = src;
  r.dst = dst;
  r.outcome = o;
  r.value = value;
  r.unit = value ? "GB/s" : "";
  r.state = state;
  d.pair_results.push_back(r);
}

void AddNode(RunData& d, const std::string& node, const std::string& stage,
             const std::string& check, Outcome o, const std::string& value = "",
             const std::string& expected = "") {
  NodeResult r;
  r.node = node;
  r.stage = stage;
  r.check = check;
  r.outcome = o;
  r.value = value;
  r.expected = expected;
  r.message = stage + "/" + check + " on " + node;
  d.node_results.push_back(r);
}

// Undirected: every pair once, src before dst; `bad` decides the outcome.
template <typename F>
void AllPairs(RunData& d, int n, const std::string& stage, const std::string& check, F outcome) {
  for (int a = 1; a <= n; ++a) {
    for (int b = a + 1; b <= n; ++b) {
      AddPair(d, stage, check, "n" + std::to_string(a), "n" + std::to_string(b), outcome(a, b));
    }
  }
}

// Ports: both directions, open unless `outcome` says otherwise.
template <typename F>
void AllPorts(RunData& d, int n, F outcome) {
  for (int a = 1; a <= n; ++a) {
    for (int b = 1; b <= n; ++b) {
      if (a == b) continue;
      Outcome o = outcome(a, b);
      AddPair(d, "ports", "tcp/29500", "n" + std::to_string(a), "n" + std::to_string(b), o,
              std::nullopt, o == Outcome::kPass ? "open" : "filtered");
    }
  }
}

std::vector<const Verdict*> OfKind(const std::vector<Verdict>& vs, const std::string& kind) {
  std::vector<const Verdict*> out;
  for (const auto& v : vs) {
    if (v.kind == kind) out.push_back(&v);
  }
  return out;
}

std::string Kinds(const std::vector<Verdict>& vs) {
  std::string s;
  for (const auto& v : vs) s += v.kind + "(" + v.summary + ") ";
  return s;
}

TEST(Analysis, CleanRunHasNoVerdicts) {
  RunData d = Cluster(4);
  AllPairs(d, 4, "nccl", "allreduce", [](int, int) { return Outcome::kPass; });
  AddNode(d, "n1", "parity", "driver", Outcome::kPass, "550");
  EXPECT_TRUE(Analyze(d).empty()) << Kinds(Analyze(d));
}

TEST(Analysis, ConnectFailuresAreNamedWithTheirReason) {
  RunData d = Cluster(4);
  AddNode(d, "n1", "connect", "agent", Outcome::kPass, "ready");
  AddNode(d, "n2", "connect", "agent", Outcome::kFail, "unreachable");
  AddNode(d, "n3", "connect", "agent", Outcome::kFail, "host-key-mismatch");
  AddNode(d, "n4", "connect", "agent", Outcome::kFail, "unreachable");
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 2u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "unreachable");
  EXPECT_EQ(vs[0].nodes, (std::vector<std::string>{"n2", "n4"}));
  EXPECT_NE(vs[0].next_step.find("n2 and n4"), std::string::npos) << vs[0].next_step;
  EXPECT_EQ(vs[1].kind, "host-key");
  EXPECT_EQ(vs[1].nodes, std::vector<std::string>{"n3"});
  EXPECT_NE(vs[1].summary.find("host key"), std::string::npos);
}

TEST(Analysis, UnderSlurmAConnectFailureSpeaksOfSlurmNotSsh) {
  RunData d = Cluster(3);
  d.run.meta["transport"] = "slurm";
  AddNode(d, "n1", "connect", "agent", Outcome::kPass, "ready");
  AddNode(d, "n2", "connect", "agent", Outcome::kFail, "unreachable");
  d.node_results.back().message = "connect: unreachable: down in Slurm (idle*)";
  AddNode(d, "n3", "connect", "agent", Outcome::kSkip, "out-of-service");
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs) << ": a drained node is not accused";
  EXPECT_EQ(vs[0].kind, "unreachable");
  EXPECT_EQ(vs[0].nodes, std::vector<std::string>{"n2"});
  EXPECT_EQ(vs[0].summary,
            "n2 cannot be reached by Slurm: connect: unreachable: down in Slurm (idle*)");
  EXPECT_EQ(vs[0].next_step.find("SSH"), std::string::npos) << vs[0].next_step;
  EXPECT_NE(vs[0].next_step.find("slurmd"), std::string::npos) << vs[0].next_step;
}

TEST(Analysis, ConnectFailuresOfSeveralNodesSayWhy) {
  RunData d = Cluster(4);
  AddNode(d, "n1", "connect", "agent", Outcome::kFail, "io");
  AddNode(d, "n2", "connect", "agent", Outcome::kFail, "io");
  d.node_results[0].message = d.node_results[1].message = "agent: exec format error";
  AddNode(d, "n3", "connect", "agent", Outcome::kHang, "timeout");
  AddNode(d, "n4", "connect", "agent", Outcome::kHang, "timeout");
  d.node_results[2].message = "hello: no answer within 60s";
  d.node_results[3].message = "hello: no answer within 30s";
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 2u) << Kinds(vs);
  EXPECT_EQ(vs[0].summary,
            "n3 and n4 did not answer in time while the agent started "
            "(e.g. n3: hello: no answer within 60s)");
  EXPECT_EQ(vs[1].summary, "n1 and n2 could not start the agent: agent: exec format error");
}

TEST(Analysis, ANodeFailingWithEveryPartnerIsABadNodeNotManyLinks) {
  RunData d = Cluster(5);
  AllPairs(d, 5, "nccl", "allreduce",
           [](int a, int b) { return a == 3 || b == 3 ? Outcome::kFail : Outcome::kPass; });
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "bad-node");
  EXPECT_EQ(vs[0].nodes, std::vector<std::string>{"n3"});
  EXPECT_EQ(vs[0].pairs.size(), 4u);
  EXPECT_EQ(vs[0].next_step, "drain n3 and test it alone");
}

TEST(Analysis, ASinglePairFailingIsABadLink) {
  RunData d = Cluster(4);
  AllPairs(d, 4, "mpi", "pingpong",
           [](int a, int b) { return a == 2 && b == 4 ? Outcome::kFail : Outcome::kPass; });
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "bad-link");
  EXPECT_EQ(vs[0].nodes, (std::vector<std::string>{"n2", "n4"}));
  EXPECT_EQ(vs[0].pairs, (std::vector<std::pair<std::string, std::string>>{{"n2", "n4"}}));
}

TEST(Analysis, TwoFailuresOfOneNodeAmongManyPartnersAreLinksNotANode) {
  RunData d = Cluster(6);
  AllPairs(d, 6, "nccl", "allreduce", [](int a, int b) {
    return a == 1 && (b == 2 || b == 3) ? Outcome::kFail : Outcome::kPass;
  });
  auto vs = Analyze(d);
  EXPECT_EQ(OfKind(vs, "bad-node").size(), 0u) << Kinds(vs);
  EXPECT_EQ(OfKind(vs, "bad-link").size(), 2u) << Kinds(vs);
}

TEST(Analysis, AFailureInOneDirectionIsOneWayAndNamesTheReceiversFirewall) {
  RunData d = Cluster(4);
  AllPorts(d, 4, [](int a, int b) { return a == 1 && b == 2 ? Outcome::kFail : Outcome::kPass; });
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "one-way");
  EXPECT_EQ(vs[0].next_step, "allow tcp 29500 from n1 in n2's firewall");
  EXPECT_EQ(vs[0].pairs.size(), 2u);  // both directions as evidence
}

TEST(Analysis, AReceiverFilteredFromEveryPeerIsPortBlockedOnThatNode) {
  RunData d = Cluster(5);
  AllPorts(d, 5, [](int, int b) { return b == 3 ? Outcome::kFail : Outcome::kPass; });
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "port-blocked");
  EXPECT_EQ(vs[0].nodes, std::vector<std::string>{"n3"});
  EXPECT_EQ(vs[0].next_step, "open tcp 29500 inbound on n3's firewall");
  EXPECT_EQ(vs[0].pairs.size(), 4u);
}

TEST(Analysis, APortClosedEverywhereIsBlockedClusterWideNotABadNode) {
  RunData d = Cluster(4);
  AllPorts(d, 4, [](int, int) { return Outcome::kFail; });
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "port-blocked");
  EXPECT_EQ(vs[0].nodes.size(), 4u);
  EXPECT_NE(vs[0].summary.find("6 of 6 pairs"), std::string::npos) << vs[0].summary;
}

TEST(Analysis, ASlowPairIsABandwidthOutlierAgainstTheMedian) {
  RunData d = Cluster(4);
  for (int a = 1; a <= 4; ++a) {
    for (int b = a + 1; b <= 4; ++b) {
      double v = (a == 2 && b == 3) ? 9.0 : 20.0;
      AddPair(d, "nccl", "allreduce", "n" + std::to_string(a), "n" + std::to_string(b),
              Outcome::kPass, v);
    }
  }
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "bandwidth-outlier");
  EXPECT_EQ(vs[0].severity, Outcome::kWarn);
  EXPECT_EQ(vs[0].nodes, (std::vector<std::string>{"n2", "n3"}));
  EXPECT_NE(vs[0].summary.find("45% of the median 20.0 GB/s"), std::string::npos) << vs[0].summary;
  // Raising the bar below 45% makes it pass.
  AnalysisOptions lax;
  lax.outlier_fraction = 0.4;
  EXPECT_TRUE(Analyze(d, lax).empty());
}

TEST(Analysis, APairSlowerThanInTheBaselineIsAnOutlierEvenAtTheMedian) {
  RunData base = Cluster(2), now = Cluster(2);
  base.run.id = 3;
  AddPair(base, "nccl", "allreduce", "n1", "n2", Outcome::kPass, 40.0);
  AddPair(now, "nccl", "allreduce", "n1", "n2", Outcome::kPass, 20.0);
  EXPECT_TRUE(Analyze(now).empty());
  AnalysisOptions o;
  o.baseline = &base;
  auto vs = Analyze(now, o);
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_NE(vs[0].summary.find("50% of run 3's 40.0 GB/s"), std::string::npos) << vs[0].summary;
}

TEST(Analysis, AFloorInGigabytesPerSecondCatchesUniformlySlowPairs) {
  RunData d = Cluster(3);
  AllPairs(d, 3, "nccl", "allreduce", [](int, int) { return Outcome::kPass; });
  for (auto& r : d.pair_results) {
    r.value = 5.0;
    r.unit = "GB/s";
  }
  AnalysisOptions o;
  o.min_busbw_gbps = 10;
  EXPECT_EQ(OfKind(Analyze(d, o), "bandwidth-outlier").size(), 1u)
      << "every pair is slow: one verdict per node would repeat; expect the node rule";
}

TEST(Analysis, ParityFailuresGroupByFieldWithTheExpectedValue) {
  RunData d = Cluster(4);
  for (int i = 1; i <= 4; ++i) {
    std::string n = "n" + std::to_string(i);
    bool odd = i == 4;
    AddNode(d, n, "parity", "driver", odd ? Outcome::kFail : Outcome::kPass,
            odd ? "535.104.05" : "550.54.15", odd ? "550.54.15" : "");
    AddNode(d, n, "parity", "kernel", i >= 3 ? Outcome::kWarn : Outcome::kPass,
            i >= 3 ? "6.1.0-17" : "6.1.0-18", i >= 3 ? "6.1.0-18" : "");
  }
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 2u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "odd-version");
  EXPECT_EQ(vs[0].check, "driver");
  EXPECT_EQ(vs[0].severity, Outcome::kFail);
  EXPECT_EQ(vs[0].summary, "driver: n4 has 535.104.05; expected 550.54.15 (parity/driver on n4)");
  EXPECT_EQ(vs[1].check, "kernel");
  EXPECT_EQ(vs[1].nodes, (std::vector<std::string>{"n3", "n4"}));
  EXPECT_EQ(vs[1].severity, Outcome::kWarn);
}

// A rule's passing nodes are no majority: node n1 passes driver_for_cuda
// with 550 while n4 needs 580, so "like the rest of the cluster" would lie.
TEST(Analysis, ParityRuleAndPinFailuresSayTheirOwnKindAndRemedyNotTheMajoritys) {
  RunData d = Cluster(4);
  for (int i = 1; i <= 4; ++i) {
    std::string n = "n" + std::to_string(i);
    bool odd = i == 4;
    AddNode(d, n, "parity", "driver_for_cuda", odd ? Outcome::kFail : Outcome::kPass, "550.54.15",
            odd ? ">=580.65.06" : ">=530.30.02");
  }
  AddNode(d, "n2", "parity", "expect.nccl", Outcome::kFail, "2.18.3", ">=2.21");
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 2u) << Kinds(vs);
  if (vs[0].check != "driver_for_cuda") std::swap(vs[0], vs[1]);
  EXPECT_EQ(vs[0].check, "driver_for_cuda");
  EXPECT_EQ(vs[0].kind, "incompatible");
  EXPECT_EQ(vs[0].nodes, (std::vector<std::string>{"n4"}));
  EXPECT_EQ(vs[0].evidence["majority"], "");
  EXPECT_EQ(vs[0].next_step,
            "upgrade the NVIDIA driver on n4 to 580.65.06 or newer, or install a "
            "torch/NCCL built for a CUDA that its driver runs");
  EXPECT_EQ(vs[1].check, "expect.nccl");
  EXPECT_EQ(vs[1].kind, "pin-mismatch");
  EXPECT_EQ(vs[1].next_step,
            "make nccl on n2 match the inventory's pin >=2.21 ([expect]), or drain n2");
}

TEST(Analysis, HangsAreNamedAndNotRepeatedAsLinks) {
  RunData d = Cluster(4);
  AllPairs(d, 4, "nccl", "allreduce",
           [](int a, int b) { return a == 1 && b == 4 ? Outcome::kHang : Outcome::kPass; });
  AddNode(d, "n2", "nccl", "intra", Outcome::kHang);
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 2u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "hang");
  EXPECT_EQ(vs[1].kind, "hang");
  auto pair_hang = vs[0].pairs.empty() ? vs[1] : vs[0];
  EXPECT_EQ(pair_hang.summary, "nccl allreduce hung between n1 and n4");
}

TEST(Analysis, AWarningSharedBySeveralNodesSaysWhatItIs) {
  RunData d = Cluster(3);
  AddNode(d, "n1", "facts", "nccl_env", Outcome::kWarn);
  AddNode(d, "n2", "facts", "nccl_env", Outcome::kWarn);
  for (auto& r : d.node_results) r.message = "NCCL_IB_DISABLE=1 turns InfiniBand off";
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].summary, "facts/nccl_env on n1 and n2: NCCL_IB_DISABLE=1 turns InfiniBand off");
}

TEST(Analysis, AWarningsStatedNextStepIsTheVerdictsNextStep) {
  RunData d = Cluster(3);
  AddNode(d, "n2", "connect", "shell", Outcome::kWarn, "prints text", "quiet");
  d.node_results.back().evidence["next_step"] = "keep non-interactive shells quiet";
  AddNode(d, "n3", "facts", "nccl_env", Outcome::kWarn);
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 2u) << Kinds(vs);
  for (const auto& v : vs) {
    if (v.check == "shell") {
      EXPECT_EQ(v.next_step, "keep non-interactive shells quiet");
    } else {
      EXPECT_EQ(v.next_step, "review facts/nccl_env on n3");
    }
  }
}

TEST(Analysis, ManyHungPairsAreCountedNotAllSpelledOut) {
  RunData d = Cluster(12);
  AllPairs(d, 12, "nccl", "allreduce",
           [](int a, int b) { return (a + b) % 2 == 0 ? Outcome::kHang : Outcome::kPass; });
  auto vs = Analyze(d);
  auto hang = std::find_if(vs.begin(), vs.end(),
                           [](const Verdict& v) { return v.kind == "hang" && v.pairs.size() > 6; });
  ASSERT_NE(hang, vs.end()) << Kinds(vs);
  EXPECT_NE(hang->summary.find(" more, among n"), std::string::npos) << hang->summary;
  EXPECT_LT(hang->summary.size(), 300u) << hang->summary;
  EXPECT_EQ(hang->evidence["pairs"].size(), hang->pairs.size());
}

TEST(Analysis, ALinkDownAndFailingWithEveryPeerIsOneVerdictNamingTheInterface) {
  RunData d = Cluster(4);
  AllPorts(d, 4, [](int a, int b) { return a == 4 || b == 4 ? Outcome::kFail : Outcome::kPass; });
  for (auto& r : d.pair_results) {
    r.stage = "nics";
    r.check = "ping/ib0";
  }
  AddNode(d, "n4", "nics", "ib0", Outcome::kFail, "down", "up");
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "bad-node");
  EXPECT_EQ(vs[0].next_step, "check the cable and switch port of n4's ib0 (down)");
  EXPECT_EQ(vs[0].evidence["node_checks"].size(), 1u);
}

TEST(Analysis, ANodeChecksStatedNextStepIsTheVerdictsNextStep) {
  RunData d = Cluster(4);
  AddNode(d, "n4", "nics", "selected", Outcome::kFail, "eth0 10.42.0.4");
  d.node_results.back().evidence["next_step"] =
      "set the MTU of eth0 on n4 to 9000 (ip link set eth0 mtu 9000)";
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].next_step, "set the MTU of eth0 on n4 to 9000 (ip link set eth0 mtu 9000)");
}

TEST(Analysis, ABadNodeOfTheNicsStageTakesTheFixItsNodeResultStates) {
  RunData d = Cluster(4);
  AllPorts(d, 4, [](int a, int b) { return a == 4 || b == 4 ? Outcome::kFail : Outcome::kPass; });
  for (auto& r : d.pair_results) {
    r.stage = "nics";
    r.check = "mtu:10.42.0.0/24";
  }
  AddNode(d, "n4", "nics", "selected", Outcome::kFail, "eth0 10.42.0.4");
  d.node_results.back().evidence["next_step"] = "set the MTU of eth0 on n4 to 9000";
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "bad-node");
  EXPECT_EQ(vs[0].next_step, "set the MTU of eth0 on n4 to 9000");
}

TEST(Analysis, VerdictsComeWorstFirst) {
  RunData d = Cluster(4);
  AddNode(d, "n1", "parity", "kernel", Outcome::kWarn, "a", "b");
  AddNode(d, "n2", "connect", "agent", Outcome::kFail, "unreachable");
  AddNode(d, "n3", "connect", "agent", Outcome::kHang, "timeout");
  AddNode(d, "n4", "nics", "ib0", Outcome::kFail, "down", "up");
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 4u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "hang");
  EXPECT_EQ(vs[1].kind, "unreachable");
  EXPECT_EQ(vs[2].kind, "node-fail");
  EXPECT_EQ(vs[2].next_step, "check the cable and switch port of n4's ib0 (down)");
  EXPECT_EQ(vs[3].kind, "odd-version");
}

TEST(Analysis, ErroredPairsAreUntestedNotFailures) {
  RunData d = Cluster(3);
  AllPairs(d, 3, "mpi", "pingpong",
           [](int a, int b) { return a == 1 && b == 2 ? Outcome::kError : Outcome::kPass; });
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "untested");
  EXPECT_EQ(vs[0].severity, Outcome::kError);
}

TEST(Analysis, AStagesOwnVerdictsAreTakenAsTheyAreAndItsPairsNotJudgedAgain) {
  RunData d = Cluster(5);
  AllPorts(d, 5, [](int, int b) { return b == 3 ? Outcome::kFail : Outcome::kPass; });
  Verdict v;
  v.kind = "port-blocked";
  v.stage = "ports";
  v.check = "tcp/29500";
  v.nodes = {"n3"};
  v.pairs = {{"n1", "n3"}, {"n2", "n3"}};
  v.summary = "n3 drops tcp/29500 from every peer";
  v.next_step = "open tcp 29500 in n3's INPUT chain";
  v.evidence = {{"stage_kind", "receiver"}};
  d.verdicts.push_back(v);
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "port-blocked");
  EXPECT_EQ(vs[0].check, "tcp/29500");
  EXPECT_EQ(vs[0].summary, "n3 drops tcp/29500 from every peer");
  EXPECT_EQ(vs[0].next_step, "open tcp 29500 in n3's INPUT chain");
  EXPECT_EQ(vs[0].pairs.size(), 2u);
  EXPECT_EQ(vs[0].evidence["stage_kind"], "receiver");
  EXPECT_EQ(CountOutcomes(d).fail, 4) << "a verdict is not a check";
}

TEST(Analysis, FailuresSpreadEvenlyOverTheClusterAreOneWidespreadVerdict) {
  // 24 nodes, one pair in eight failing at random: no node or link
  // explains it; one verdict with counts and examples, not ~35 links.
  RunData d = Cluster(24);
  std::mt19937 rng(5);
  std::bernoulli_distribution bad(0.125);
  AllPairs(d, 24, "nccl", "allreduce",
           [&](int, int) { return bad(rng) ? Outcome::kFail : Outcome::kPass; });
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "widespread");
  EXPECT_NE(vs[0].summary.find("pairs across the cluster"), std::string::npos) << vs[0].summary;
  EXPECT_NE(vs[0].summary.find("no node stands out"), std::string::npos) << vs[0].summary;
  EXPECT_EQ(vs[0].evidence["tested_pairs"], 276);
  EXPECT_EQ(vs[0].evidence["failed_pairs"].get<size_t>(), vs[0].pairs.size());
  EXPECT_EQ(vs[0].evidence["examples"].size(), 6u);
}

TEST(Analysis, OneBadNodeAmongManyIsABadNodeNotWidespread) {
  RunData d = Cluster(24);
  AllPairs(d, 24, "nccl", "allreduce", [](int a, int b) {
    return a == 9 || b == 9 || (a == 1 && b == 2) ? Outcome::kFail : Outcome::kPass;
  });
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 2u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "bad-node");
  EXPECT_EQ(vs[0].nodes, std::vector<std::string>{"n9"});
  EXPECT_EQ(vs[1].kind, "bad-link");
}

TEST(Analysis, AFewFailingPairsAreNamedPairByPair) {
  RunData d = Cluster(16);
  AllPairs(d, 16, "nccl", "allreduce", [](int a, int b) {
    return (a == 1 && b == 2) || (a == 5 && b == 9) || (a == 11 && b == 16) ? Outcome::kFail
                                                                            : Outcome::kPass;
  });
  auto vs = Analyze(d);
  EXPECT_EQ(OfKind(vs, "bad-link").size(), 3u) << Kinds(vs);
  EXPECT_EQ(OfKind(vs, "widespread").size(), 0u) << Kinds(vs);
}

TEST(Analysis, AStageWidespreadOnSeveralChecksIsOneVerdict) {
  RunData d = Cluster(6);
  for (const char* check : {"tcp:10.42.0.0/24", "mtu:10.42.0.0/24"}) {
    AllPairs(d, 6, "nics", check, [](int, int) { return Outcome::kFail; });
  }
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "widespread");
  EXPECT_EQ(vs[0].check, "tcp:10.42.0.0/24, mtu:10.42.0.0/24");
  EXPECT_EQ(vs[0].pairs.size(), 30u);
  EXPECT_EQ(vs[0].evidence["checks"].size(), 2u);
}

TEST(Analysis, AnMtuMismatchSaysWhichMtuToSetNotCheckTheCable) {
  // The nics stage's own finding: n4's eth1 has MTU 1500 on a 9000 subnet.
  RunData d = Cluster(4);
  d.run.meta["nics"] = {{"subnets", {{{"subnet", "10.42.0.0/24"}, {"mtu", 9000}}}}};
  AddNode(d, "n4", "nics", "selected", Outcome::kFail, "eth1 10.42.0.4");
  d.node_results.back().evidence = {
      {"subnet", "10.42.0.0/24"},
      {"problems",
       {{{"kind", "mtu"},
         {"nic", "eth1"},
         {"message", "n4: eth1 MTU 1500, the rest of 10.42.0.0/24 has 9000"}}}}};
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].next_step.rfind("set MTU 9000 on eth1 of n4", 0), 0u) << vs[0].next_step;
  // The same node failing its DF datagrams with every peer is a bad node
  // whose next step is the same cause.
  AllPairs(d, 4, "nics", "mtu:10.42.0.0/24",
           [](int a, int b) { return a == 4 || b == 4 ? Outcome::kFail : Outcome::kPass; });
  vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "bad-node");
  EXPECT_EQ(vs[0].next_step.rfind("set MTU 9000 on eth1 of n4", 0), 0u) << vs[0].next_step;
}

TEST(Analysis, AResultsOwnNextStepIsTheVerdictsNextStep) {
  RunData d = Cluster(4);
  AllPairs(d, 4, "mpi", "pingpong",
           [](int a, int b) { return a == 2 && b == 4 ? Outcome::kFail : Outcome::kPass; });
  for (auto& r : d.pair_results) {
    if (r.outcome == Outcome::kFail) r.evidence["next_step"] = "reseat the cable of n4's eth2";
  }
  AddNode(d, "n1", "connect", "shell", Outcome::kWarn);
  d.node_results.back().evidence["next_step"] = "keep non-interactive shells quiet on n1";
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 2u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "bad-link");
  EXPECT_EQ(vs[0].next_step, "reseat the cable of n4's eth2");
  EXPECT_EQ(vs[1].next_step, "keep non-interactive shells quiet on n1");
}

TEST(Analysis, ANodeBadInSeveralStagesIsOneVerdictWithItsSymptoms) {
  // node4's data link is down: nics fails with every peer (and says why),
  // and the ports stage, run later, finds it isolated.
  RunData d = Cluster(4);
  AddNode(d, "n4", "nics", "selected", Outcome::kFail, "eth0 10.0.0.4");
  d.node_results.back().evidence = {{"subnet", "10.0.0.0/24"},
                                    {"problems", {{{"kind", "down"}, {"nic", "eth0"}}}}};
  AllPairs(d, 4, "nics", "tcp:10.0.0.0/24",
           [](int a, int b) { return a == 4 || b == 4 ? Outcome::kFail : Outcome::kPass; });
  Verdict isolated;
  isolated.kind = "bad-node";
  isolated.stage = "ports";
  isolated.nodes = {"n4"};
  isolated.summary = "n4 neither reaches nor is reached by any peer on any port";
  isolated.next_step = "look at n4's link";
  isolated.evidence = {{"stage_kind", "isolated"}};
  d.verdicts.push_back(isolated);
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "bad-node");
  EXPECT_EQ(vs[0].stage, "nics");
  EXPECT_EQ(vs[0].next_step.rfind("bring eth0 of n4 up", 0), 0u) << vs[0].next_step;
  ASSERT_EQ(vs[0].explains.size(), 1u);
  EXPECT_EQ(vs[0].explains[0].stage, "ports");
  EXPECT_NE(vs[0].summary.find("; this also explains 1 failure in ports"), std::string::npos)
      << vs[0].summary;
}

TEST(Analysis, AStageVerdictWithItsOwnSymptomsListFoldsWithoutAnAbort) {
  // The ports stage writes its own evidence "symptoms" (a list of
  // {symptom, probes, states}); the cross-stage fold must not read or
  // extend it (it once aborted the controller with json type_error 302).
  RunData d = Cluster(4);
  AllPairs(d, 4, "nics", "tcp:10.0.0.0/24",
           [](int a, int b) { return a == 4 || b == 4 ? Outcome::kFail : Outcome::kPass; });
  Verdict ports;
  ports.kind = "bad-node";
  ports.stage = "ports";
  ports.nodes = {"n4"};
  ports.summary = "n4 drops its ephemeral range";
  ports.evidence = {{"symptoms", {{{"symptom", "ephemeral"}, {"probes", 14}, {"states", 1}}}}};
  d.verdicts.push_back(ports);
  std::vector<Verdict> vs;
  ASSERT_NO_THROW(vs = Analyze(d));
  ASSERT_EQ(vs.size(), 1u) << VerdictsToJson(vs).dump();
  // nics ran first: the ports verdict is its symptom, typed, and nothing
  // was written into anyone's evidence.
  ASSERT_EQ(vs[0].explains.size(), 1u);
  EXPECT_EQ(vs[0].explains[0].stage, "ports");
  EXPECT_FALSE(vs[0].evidence.contains("symptoms")) << vs[0].evidence.dump();
}

TEST(Analysis, VerdictJsonCarriesEverything) {
  RunData d = Cluster(4);
  AllPairs(d, 4, "mpi", "pingpong",
           [](int a, int b) { return a == 2 && b == 4 ? Outcome::kFail : Outcome::kPass; });
  auto j = VerdictsToJson(Analyze(d));
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["kind"], "bad-link");
  EXPECT_EQ(j[0]["severity"], "fail");
  EXPECT_EQ(j[0]["pairs"][0][0], "n2");
  EXPECT_EQ(j[0]["evidence"]["pairs"][0]["outcome"], "fail");
}

}  // namespace
}  // namespace cc
