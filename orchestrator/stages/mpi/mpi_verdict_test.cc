#include "orchestrator/stages/mpi/mpi_verdict.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "build_paths.h"
#include "orchestrator/run/schedule.h"

namespace cc {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> FixtureLines(const std::string& name) {
  std::ifstream f(std::string(CLUSTERCHECK_FIXTURES) + "/mpi/" + name);
  std::vector<std::string> out;
  for (std::string l; std::getline(f, l);) out.push_back(l);
  return out;
}

std::map<std::string, std::string> SimAliases() {
  std::map<std::string, std::string> a;
  for (int i = 1; i <= 4; ++i) {
    std::string n = "node" + std::to_string(i);
    a[n] = n;
    a["10.45.0." + std::to_string(i)] = n;
  }
  return a;
}

const NodeResult* Find(const MpiRunJudgement& j, const std::string& node,
                       const std::string& check) {
  for (const NodeResult& r : j.nodes) {
    if (r.node == node && r.check == check) return &r;
  }
  return nullptr;
}

// Captured from Open MPI 4.1.4 on the simulated cluster with
// --mca btl_tcp_if_include eth9 (no such interface on any node).
TEST(AttributeMpiMessages, AWrongBtlInterfaceNamesTheSettingAndEveryNode) {
  MpiProbeOutput o = ParseMpiProbeOutput(FixtureLines("bad-btl-if-4-nodes.txt"));
  ASSERT_EQ(o.hellos.size(), 4u);
  std::vector<MpiBlame> b = AttributeMpiMessages(o.other, SimAliases());
  ASSERT_GE(b.size(), 2u);
  EXPECT_EQ(b[0].kind, "bad-if");
  EXPECT_THAT(b[0].nodes, ::testing::UnorderedElementsAre("node1", "node2", "node3", "node4"));
  EXPECT_THAT(b[0].message,
              HasSubstr("btl_tcp_if_include=\"eth9\" is not usable on node[1-4]: Unknown "
                        "interface name, so Open MPI ignores it"));
  EXPECT_THAT(b[0].message, HasSubstr("Open MPI: \"WARNING: An invalid value was given for "
                                      "btl_tcp_if_include."));
  bool unreachable = false;
  for (const MpiBlame& x : b) {
    if (x.kind != "unreachable") continue;
    unreachable = true;
    EXPECT_THAT(x.message, HasSubstr("BTLs attempted: self"));
    // "is on host: 10.45.0.4" is an address: mapped to its node.
    EXPECT_THAT(x.nodes, ::testing::Contains("node4"));
  }
  EXPECT_TRUE(unreachable);
}

TEST(JudgeMpiRun, AWrongBtlInterfaceFailsTheAllreduceAndPairsWithTheExplanation) {
  MpiRunFacts f;
  f.nodes = {"node1", "node2", "node3", "node4"};
  f.output = ParseMpiProbeOutput(FixtureLines("bad-btl-if-4-nodes.txt"));
  f.blames = AttributeMpiMessages(f.output.other, SimAliases());
  f.exit_code = 17;
  MpiRunJudgement j = JudgeMpiRun(f);
  ASSERT_EQ(j.nodes.size(), 8u);
  ASSERT_EQ(j.pairs.size(), 12u);  // 6 pairs x latency, bandwidth
  EXPECT_EQ(Find(j, "node3", "launch")->outcome, Outcome::kPass);
  const NodeResult* ar = Find(j, "node2", "allreduce");
  EXPECT_EQ(ar->outcome, Outcome::kFail);
  EXPECT_THAT(ar->message, HasSubstr("mpirun exited 17"));
  EXPECT_THAT(ar->message, HasSubstr("btl_tcp_if_include=\"eth9\" is not usable"));
  for (const PairResult& p : j.pairs) {
    EXPECT_EQ(p.outcome, Outcome::kFail);
    EXPECT_THAT(p.message, HasSubstr("eth9"));
  }
}

// Every rank of a three-rank job says hello and sums its allreduce right.
std::vector<std::string> HelloAndGoodAllreduceFromThreeRanks() {
  std::vector<std::string> lines;
  for (int r = 0; r < 3; ++r) {
    lines.push_back(R"({"type":"hello","rank":)" + std::to_string(r) + R"(,"size":3,"host":"h"})");
    lines.push_back(R"({"type":"allreduce","rank":)" + std::to_string(r) +
                    R"(,"ok":true,"bytes":1024,"mismatches":0,"us":5})");
  }
  return lines;
}

TEST(JudgeMpiRun, AGoodRunGivesEveryPairItsFiguresInRoundRobinOrder) {
  MpiRunFacts f;
  f.nodes = {"a", "b", "c"};
  std::vector<std::string> lines = HelloAndGoodAllreduceFromThreeRanks();
  lines.push_back(
      R"({"type":"pair","rank":1,"peer":2,"round":0,"ok":true,"latency_us":10,"bandwidth_gbps":2.5,"lat_bytes":8,"bw_bytes":4194304,"iters":20})");
  lines.push_back(
      R"({"type":"pair","rank":0,"peer":2,"round":1,"ok":false,"error":"send of 8 bytes: timeout after 10 s"})");
  f.output = ParseMpiProbeOutput(lines);
  MpiRunJudgement j = JudgeMpiRun(f);
  ASSERT_EQ(j.pairs.size(), 6u);
  EXPECT_EQ(j.pairs[0].src, "b");  // round 0 of the circle method: b-c
  EXPECT_EQ(j.pairs[0].check, "latency");
  EXPECT_EQ(j.pairs[0].outcome, Outcome::kPass);
  EXPECT_DOUBLE_EQ(*j.pairs[0].value, 10);
  EXPECT_EQ(j.pairs[1].unit, "GB/s");
  EXPECT_DOUBLE_EQ(*j.pairs[1].value, 2.5);
  EXPECT_EQ(j.pairs[2].src, "a");
  EXPECT_EQ(j.pairs[2].dst, "c");
  EXPECT_EQ(j.pairs[2].outcome, Outcome::kFail);
  EXPECT_THAT(j.pairs[2].message, HasSubstr("a's side: send of 8 bytes: timeout after 10 s"));
  // a-b never reported and nothing was said: an error, not a silent pass.
  EXPECT_EQ(j.pairs[4].outcome, Outcome::kError);
  EXPECT_EQ(Find(j, "c", "allreduce")->outcome, Outcome::kPass);
}

// Slices of rounds and single results say what the whole judgement says,
// in the same order, whatever the slice size.
TEST(MpiPairJudge, SlicesAndSingleResultsAreTheWholeJudgementInOrder) {
  MpiRunFacts f;
  const int n = 9;
  std::vector<std::string> lines;
  for (int r = 0; r < n; ++r) {
    f.nodes.push_back("node" + std::to_string(r));
    lines.push_back(R"({"type":"hello","rank":)" + std::to_string(r) + R"(,"size":9,"host":"h"})");
    lines.push_back(R"({"type":"allreduce","rank":)" + std::to_string(r) +
                    R"(,"ok":true,"bytes":1024,"mismatches":0,"us":5})");
  }
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      if ((a + b) % 5 == 0) continue;  // never reported
      bool ok = (a * b) % 7 != 3;
      lines.push_back(R"({"type":"pair","rank":)" + std::to_string(a) + R"(,"peer":)" +
                      std::to_string(b) + R"(,"round":0,"ok":)" + (ok ? "true" : "false") +
                      R"(,"latency_us":)" + std::to_string(a + b) +
                      R"(,"bandwidth_gbps":2.5,"lat_bytes":8,"bw_bytes":4194304,"iters":20)" +
                      (ok ? "" : R"(,"error":"echo timed out")") + "}");
    }
  }
  f.exit_code = 3;
  f.output = ParseMpiProbeOutput(lines);
  const MpiRunJudgement whole = JudgeMpiRun(f);
  ASSERT_EQ(whole.pairs.size(), 2u * n * (n - 1) / 2);
  MpiPairJudge judge(f);
  EXPECT_EQ(judge.results(), whole.pairs.size());
  EXPECT_EQ(judge.Nodes().size(), whole.nodes.size());
  auto same = [](const PairResult& x, const PairResult& y) {
    return x.src == y.src && x.dst == y.dst && x.check == y.check && x.outcome == y.outcome &&
           x.state == y.state && x.value == y.value && x.message == y.message &&
           x.evidence == y.evidence;
  };
  for (size_t step : {size_t{1}, size_t{2}, size_t{4}, size_t{100}}) {
    std::vector<PairResult> joined;
    for (size_t r = 0; r < judge.rounds(); r += step) {
      for (PairResult& p : judge.Pairs(r, r + step)) joined.push_back(std::move(p));
    }
    ASSERT_EQ(joined.size(), whole.pairs.size()) << step;
    for (size_t i = 0; i < joined.size(); ++i) EXPECT_TRUE(same(joined[i], whole.pairs[i])) << i;
  }
  std::set<Outcome> seen;
  for (size_t i = 0; i < whole.pairs.size(); ++i) {
    EXPECT_TRUE(same(judge.At(i), whole.pairs[i])) << i;
    seen.insert(whole.pairs[i].outcome);
  }
  // The data has passes, failures and unreported pairs.
  EXPECT_EQ(seen, (std::set<Outcome>{Outcome::kPass, Outcome::kFail, Outcome::kError}));
  PairResult none = judge.At(whole.pairs.size());
  EXPECT_EQ(none.outcome, Outcome::kError);
  EXPECT_THAT(none.message, HasSubstr("no pair result 72"));
}

TEST(JudgeMpiRun, APairWhoseLineAnAbortedJobNeverWroteIsUnreportedNotFailed) {
  MpiRunFacts f;
  f.nodes = {"a", "b", "c"};
  f.exit_code = 3;  // a rank saw a failure and aborted the job
  std::vector<std::string> lines = HelloAndGoodAllreduceFromThreeRanks();
  lines.push_back(
      R"({"type":"pair","rank":1,"peer":2,"round":0,"ok":true,"latency_us":10,"bandwidth_gbps":2.5,"lat_bytes":8,"bw_bytes":4194304,"iters":20})");
  f.output = ParseMpiProbeOutput(lines);
  MpiRunJudgement j = JudgeMpiRun(f);
  ASSERT_EQ(j.pairs.size(), 6u);
  EXPECT_EQ(j.pairs[0].outcome, Outcome::kPass);
  for (size_t i = 2; i < 6; ++i) {
    EXPECT_EQ(j.pairs[i].outcome, Outcome::kError) << i;
    EXPECT_EQ(j.pairs[i].state, "unreported") << i;
    EXPECT_THAT(j.pairs[i].message, HasSubstr("mpirun exited 3"));
  }
  // A job that exited 0 without a pair's line is not this case.
  f.exit_code = 0;
  EXPECT_NE(JudgeMpiRun(f).pairs[4].state, "unreported");
}

TEST(JudgeMpiRun, AProbeGivenOneRoundOfPairsIsJudgedOnThoseAlone) {
  MpiRunFacts f;
  f.nodes = {"a", "b", "c", "d"};
  f.rounds = {{{"0", "3"}, {"1", "2"}}};  // a burn-in round's --pairs 0-3,1-2
  std::vector<std::string> lines;
  for (int r = 0; r < 4; ++r) {
    lines.push_back(R"({"type":"hello","rank":)" + std::to_string(r) + R"(,"size":4,"host":"h"})");
    lines.push_back(R"({"type":"allreduce","rank":)" + std::to_string(r) +
                    R"(,"ok":true,"bytes":1024,"mismatches":0,"us":5})");
  }
  for (const char* p : {R"("rank":0,"peer":3)", R"("rank":1,"peer":2)"}) {
    lines.push_back(
        std::string(R"({"type":"pair",)") + p +
        R"(,"round":0,"ok":true,"latency_us":10,"bandwidth_gbps":2.5,"lat_bytes":8,"bw_bytes":4194304,"iters":20})");
  }
  f.output = ParseMpiProbeOutput(lines);
  MpiRunJudgement j = JudgeMpiRun(f);
  ASSERT_EQ(j.pairs.size(), 4u) << "two pairs x latency, bandwidth; the other pairs are not "
                                   "this round's, so neither run nor `error`";
  for (const PairResult& p : j.pairs) {
    EXPECT_EQ(p.outcome, Outcome::kPass) << p.src << "-" << p.dst << " " << p.message;
  }
  EXPECT_EQ(j.pairs[0].src + j.pairs[0].dst, "ad");
  EXPECT_EQ(j.pairs[2].src + j.pairs[2].dst, "bc");
}

TEST(JudgeMpiRun, ANodeNamedAloneFailsItsLaunchAndTheRestAreNotRun) {
  MpiRunFacts f;
  f.nodes = {"node1", "node2", "node3"};
  f.hung = true;
  f.timeout_s = 30;
  MpiBlame b;
  b.kind = "alone";
  b.nodes = {"node3"};
  b.message = "node3 fails even alone (mpirun -np 1 on it hung for 30 s)";
  f.blames = {b};
  MpiRunJudgement j = JudgeMpiRun(f);
  EXPECT_EQ(Find(j, "node3", "launch")->outcome, Outcome::kFail);
  EXPECT_THAT(Find(j, "node3", "launch")->message, HasSubstr("node3 fails even alone"));
  EXPECT_EQ(Find(j, "node1", "launch")->outcome, Outcome::kError);
  EXPECT_THAT(Find(j, "node1", "launch")->message, HasSubstr("because of node3"));
  for (const PairResult& p : j.pairs) EXPECT_EQ(p.outcome, Outcome::kError);
}

TEST(JudgeMpiRun, NothingReportedBeforeTheDeadlineIsAHang) {
  MpiRunFacts f;
  f.nodes = {"node1", "node2"};
  f.hung = true;
  f.timeout_s = 30;
  MpiRunJudgement j = JudgeMpiRun(f);
  EXPECT_EQ(Find(j, "node1", "launch")->outcome, Outcome::kHang);
  EXPECT_THAT(Find(j, "node1", "launch")->message, HasSubstr("stopped at its deadline (30 s)"));
  EXPECT_EQ(j.pairs.at(0).outcome, Outcome::kHang);
}

TEST(AttributeMpiMessages, SshFailuresAndAMissingProbeNameTheirNodes) {
  std::vector<MpiBlame> b = AttributeMpiMessages(
      {"ssh: connect to host 10.45.0.2 port 22: Connection refused",
       "--------------------------------------------------------------------------",
       "mpirun was unable to launch the specified application as it could not access",
       "or execute an executable:", "", "Executable: /opt/cc/clustercheck-mpi-probe", "Node: node4",
       "", "while attempting to start process rank 3.",
       "--------------------------------------------------------------------------"},
      SimAliases());
  ASSERT_EQ(b.size(), 2u);
  for (const MpiBlame& x : b) {
    if (x.kind == "ssh") {
      EXPECT_EQ(x.nodes, std::vector<std::string>{"node2"});
      EXPECT_THAT(x.message, HasSubstr("Connection refused"));
    } else {
      EXPECT_EQ(x.kind, "no-executable");
      EXPECT_EQ(x.nodes, std::vector<std::string>{"node4"});
      EXPECT_THAT(x.message, HasSubstr("node4 cannot run /opt/cc/clustercheck-mpi-probe"));
    }
  }
}

TEST(AttributeMpiMessages, ATcpConnectFailureNamesTheLink) {
  std::vector<MpiBlame> b = AttributeMpiMessages(
      {"--------------------------------------------------------------------------",
       "WARNING: Open MPI failed to TCP connect to a peer MPI process.  This", "should not happen.",
       "", "Your Open MPI job may now hang or fail.", "", "  Local host: node1",
       "  PID:        4242", "  Message:    connect() to 10.45.0.3:1024 failed",
       "  Error:      Connection refused (111)",
       "--------------------------------------------------------------------------"},
      SimAliases());
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].kind, "tcp-connect");
  EXPECT_EQ(b[0].nodes, std::vector<std::string>{"node1"});
  EXPECT_EQ(b[0].peer, "node3");
  EXPECT_THAT(b[0].message,
              HasSubstr("node1 could not open Open MPI's TCP connection to node3: "
                        "connect() to 10.45.0.3:1024 failed: Connection refused (111)"));
}

}  // namespace
}  // namespace cc

namespace cc {
namespace {

// 4 ranks, all started with their allreduce; the pairs of the first
// `done_rounds` rounds reported, then mpirun was stopped.
MpiRunFacts StoppedAfter(size_t done_rounds, bool cap_stop) {
  MpiRunFacts f;
  f.nodes = {"node1", "node2", "node3", "node4"};
  f.hung = true;
  f.cap_stop = cap_stop;
  f.stop_why = cap_stop ? "mpirun was still printing at its overall cap of 170 s"
                        : "no new line from mpirun for 120 s";
  f.timeout_s = 120;
  for (int r = 0; r < 4; ++r) {
    f.output.hellos[r] = MpiHello{r, 4, "h" + std::to_string(r), "Open MPI"};
    MpiAllreduceLine a;
    a.rank = r;
    a.ok = true;
    f.output.allreduce[r] = a;
  }
  std::vector<Round> rounds = RoundRobinRounds({"0", "1", "2", "3"});
  for (size_t r = 0; r < done_rounds; ++r) {
    for (const auto& [a, b] : rounds[r]) {
      MpiPairLine p;
      p.rank = std::stoi(a);
      p.peer = std::stoi(b);
      p.round = static_cast<int>(r);
      p.ok = true;
      f.output.pairs.push_back(p);
    }
  }
  return f;
}

TEST(JudgeMpiRun, AfterAnIdleStopThePairsInProgressAreSuspectsAndTheRestNotReached) {
  MpiRunJudgement j = JudgeMpiRun(StoppedAfter(1, false));
  int pass = 0, hang = 0, error = 0;
  for (const PairResult& p : j.pairs) {
    if (p.outcome == Outcome::kPass) ++pass;
    if (p.outcome == Outcome::kHang) {
      ++hang;
      EXPECT_THAT(p.message, HasSubstr("round 2 of 3"));
      EXPECT_THAT(p.message, HasSubstr("no new line"));
    }
    if (p.outcome == Outcome::kError) {
      ++error;
      EXPECT_EQ(p.state, "not-reached");
      EXPECT_THAT(p.message, HasSubstr("not reached: the job was stopped at its deadline "
                                       "after round 1 of 3"));
    }
  }
  EXPECT_EQ(pass, 4);   // round 1: 2 pairs x latency, bandwidth
  EXPECT_EQ(hang, 4);   // round 2
  EXPECT_EQ(error, 4);  // round 3
  EXPECT_EQ(Find(j, "node1", "launch")->outcome, Outcome::kPass);
}

TEST(JudgeMpiRun, AJobStoppedAtItsCapWhileWorkingAccusesNoPair) {
  MpiRunJudgement j = JudgeMpiRun(StoppedAfter(2, true));
  for (const PairResult& p : j.pairs) {
    EXPECT_NE(p.outcome, Outcome::kHang) << p.message;
    EXPECT_NE(p.outcome, Outcome::kFail) << p.message;
    if (p.outcome == Outcome::kError) {
      EXPECT_THAT(p.message, HasSubstr("after round 2 of 3"));
      EXPECT_THAT(p.message, HasSubstr("overall cap"));
    }
  }
}

}  // namespace
}  // namespace cc
