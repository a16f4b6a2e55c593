// Flaky and unconfirmed results as verdicts (analysis_confirm.h), through
// Analyze() as reports call it.
#include "orchestrator/analysis/analysis_confirm.h"

#include <gtest/gtest.h>

#include <random>

#include "orchestrator/run/confirm.h"

namespace cc {
namespace {

RunData Cluster(int n) {
  RunData d;
  std::vector<std::string> names;
  for (int i = 1; i <= n; ++i) names.push_back("n" + std::to_string(i));
  d.run.meta["nodes"] = names;
  return d;
}

std::string N(int i) { return "n" + std::to_string(i); }

PairResult Probe(const std::string& stage, const std::string& check, const std::string& src,
                 const std::string& dst, Outcome o, const std::string& state) {
  PairResult r;
  r.stage = stage;
  r.check = check;
  r.src = src;
  r.dst = dst;
  r.outcome = o;
  r.state = state;
  r.message = src + " -> " + dst + ": " + state;
  return r;
}

// The merged result of a first attempt `first` and a retest `second`.
PairResult Confirmed(const std::string& stage, const std::string& src, const std::string& dst,
                     Outcome first, Outcome second, const std::string& check = "tcp/29500") {
  auto state = [](Outcome o) {
    return o == Outcome::kPass ? "open" : o == Outcome::kError ? "no-agent" : "filtered";
  };
  return Confirm(Probe(stage, check, src, dst, first, state(first)),
                 Probe(stage, check, src, dst, second, state(second)));
}

// Every ordered pair of n nodes; `merged` decides each pair's result.
template <typename F>
void AllPairs(RunData& d, int n, const std::string& stage, F merged) {
  for (int a = 1; a <= n; ++a) {
    for (int b = 1; b <= n; ++b) {
      if (a != b) d.pair_results.push_back(merged(a, b));
    }
  }
}

PairResult Pass(const std::string& stage, int a, int b) {
  return Probe(stage, "tcp/29500", N(a), N(b), Outcome::kPass, "open");
}

std::string Kinds(const std::vector<Verdict>& vs) {
  std::string s;
  for (const auto& v : vs) s += v.kind + "(" + v.summary + ") ";
  return s;
}

TEST(AnalysisConfirm, AFlakyPairIsOneWarnNamingThePairWithBothAttempts) {
  RunData d = Cluster(4);
  AllPairs(d, 4, "nics", [](int a, int b) {
    if (a == 1 && b == 2) return Confirmed("nics", N(a), N(b), Outcome::kFail, Outcome::kPass);
    return Pass("nics", a, b);
  });
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "flaky");
  EXPECT_EQ(vs[0].severity, Outcome::kWarn);
  EXPECT_EQ(vs[0].nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(vs[0].pairs, (std::vector<std::pair<std::string, std::string>>{{"n1", "n2"}}));
  EXPECT_EQ(vs[0].summary,
            "nics tcp/29500 between n1 and n2 is flaky: filtered on the first attempt, open on "
            "the retest");
  const auto& attempts = vs[0].evidence["results"][0]["attempts"];
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0]["outcome"], "fail");
  EXPECT_EQ(attempts[1]["outcome"], "pass");
}

TEST(AnalysisConfirm, FlakyResultsNeverAccuseANode) {
  // n3 was flaky with every partner: a bad node on first attempts only.
  RunData d = Cluster(6);
  AllPairs(d, 6, "nics", [](int a, int b) {
    if (a == 3 || b == 3) return Confirmed("nics", N(a), N(b), Outcome::kHang, Outcome::kPass);
    return Pass("nics", a, b);
  });
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "flaky");
  EXPECT_EQ(vs[0].nodes, std::vector<std::string>{"n3"});
  EXPECT_EQ(vs[0].pairs.size(), 10u);
  EXPECT_NE(vs[0].summary.find("n3 is flaky with 5 of 5 partners"), std::string::npos)
      << vs[0].summary;
}

TEST(AnalysisConfirm, FlakyPairsSpreadOverTheClusterAreOneVerdictForTheStage) {
  RunData d = Cluster(16);
  std::mt19937 rng(3);
  std::bernoulli_distribution flaky(0.15);
  AllPairs(d, 16, "ports", [&](int a, int b) {
    if (flaky(rng)) return Confirmed("ports", N(a), N(b), Outcome::kHang, Outcome::kPass);
    return Pass("ports", a, b);
  });
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "flaky");
  EXPECT_NE(vs[0].summary.find("pairs were flaky, spread over"), std::string::npos)
      << vs[0].summary;
  EXPECT_LE(vs[0].evidence["results"].size(), 10u) << "examples, not every pair";
  EXPECT_GT(vs[0].evidence["flaky_pairs"].get<int>(), 10);
}

TEST(AnalysisConfirm, WarningsOnTheFlakyNodesPairsAreItsEvidenceNotAnotherVerdict) {
  // node3's link loses packets: some probes fail first and pass on the
  // retest (flaky), others connect but their answer comes late (warn).
  RunData d = Cluster(6);
  AllPairs(d, 6, "ports", [](int a, int b) {
    if (b == 3 && a <= 2) return Confirmed("ports", N(a), N(b), Outcome::kHang, Outcome::kPass);
    if (b == 3 && a == 4) {
      PairResult late = Probe("ports", "tcp/29500", N(a), N(b), Outcome::kWarn, "no-answer");
      late.message = "connected, but no token came back in time";
      return late;
    }
    if (a == 5 && b == 6) return Probe("ports", "tcp/29500", N(a), N(b), Outcome::kWarn, "slow");
    return Pass("ports", a, b);
  });
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 2u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "flaky");
  EXPECT_EQ(vs[0].nodes, std::vector<std::string>{"n3"});
  EXPECT_EQ(vs[0].evidence["warnings"].size(), 1u);
  EXPECT_NE(vs[0].summary.find("it also explains 1 warning of tcp/29500"), std::string::npos)
      << vs[0].summary;
  EXPECT_EQ(vs[1].kind, "warning") << "n5 -> n6 has nothing to do with n3";
  EXPECT_EQ(vs[1].pairs, (std::vector<std::pair<std::string, std::string>>{{"n5", "n6"}}));
}

TEST(AnalysisConfirm, ANodeFlakyInSeveralStagesIsOneVerdict) {
  RunData d = Cluster(5);
  for (const char* stage : {"nics", "ports"}) {
    AllPairs(d, 5, stage, [&](int a, int b) {
      if (a == 2 && b != 5) return Confirmed(stage, N(a), N(b), Outcome::kFail, Outcome::kPass);
      return Pass(stage, a, b);
    });
  }
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "flaky");
  EXPECT_EQ(vs[0].stage, "nics");
  EXPECT_EQ(vs[0].nodes, std::vector<std::string>{"n2"});
  EXPECT_NE(vs[0].summary.find("this also explains 1 flaky finding in ports"), std::string::npos)
      << vs[0].summary;
}

TEST(AnalysisConfirm, AConfirmedFailureStaysAFailureWithBothAttempts) {
  RunData d = Cluster(4);
  AllPairs(d, 4, "mpi", [](int a, int b) {
    if ((a == 2 && b == 4) || (a == 4 && b == 2)) {
      return Confirmed("mpi", N(a), N(b), Outcome::kFail, Outcome::kFail);
    }
    return Pass("mpi", a, b);
  });
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "bad-link");
  EXPECT_EQ(vs[0].severity, Outcome::kFail);
  EXPECT_EQ(vs[0].summary.find("not confirmed"), std::string::npos);
  EXPECT_EQ(vs[0].evidence["pairs"][0]["evidence"]["attempts"].size(), 2u);
}

TEST(AnalysisConfirm, AnUnconfirmedFailureIsReportedAndSaysWhy) {
  RunData d = Cluster(4);
  for (int a = 1; a <= 4; ++a) {
    for (int b = a + 1; b <= 4; ++b) {
      d.pair_results.push_back(a == 1 && b == 3
                                   ? Confirmed("mpi", N(a), N(b), Outcome::kFail, Outcome::kError)
                                   : Pass("mpi", a, b));
    }
  }
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 1u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "bad-link");
  EXPECT_EQ(vs[0].severity, Outcome::kFail);
  EXPECT_NE(vs[0].summary.find("(not confirmed: the retest ended error: n1 -> n3: no-agent)"),
            std::string::npos)
      << vs[0].summary;
  EXPECT_EQ(vs[0].evidence["unconfirmed"].size(), 1u);
}

TEST(AnalysisConfirm, AFlakyOrUnconfirmedNodeCheckSaysSo) {
  RunData d = Cluster(3);
  NodeResult flaky;
  flaky.node = "n2";
  flaky.stage = "mpi";
  flaky.check = "launch";
  flaky.outcome = Outcome::kWarn;
  flaky.evidence = {
      {"confirmation", kFlaky},
      {"attempts",
       {{{"outcome", "fail"}, {"state", "timeout"}}, {{"outcome", "pass"}, {"state", ""}}}}};
  NodeResult unconfirmed = flaky;
  unconfirmed.node = "n3";
  unconfirmed.check = "intra";
  unconfirmed.outcome = Outcome::kFail;
  unconfirmed.evidence = {
      {"confirmation", kUnconfirmed},
      {"attempts", {{{"outcome", "fail"}}, {{"outcome", "error"}, {"message", "node gone"}}}}};
  d.node_results = {flaky, unconfirmed};
  auto vs = Analyze(d);
  ASSERT_EQ(vs.size(), 2u) << Kinds(vs);
  EXPECT_EQ(vs[0].kind, "node-fail");
  EXPECT_NE(vs[0].summary.find("(not confirmed: the retest ended error: node gone)"),
            std::string::npos)
      << vs[0].summary;
  EXPECT_EQ(vs[1].kind, "flaky");
  EXPECT_EQ(vs[1].summary,
            "mpi/launch on n2 is flaky: timeout on the first attempt, pass on the retest");
}

TEST(AnalysisConfirm, ConfirmationWordsOfEvidence) {
  PairResult unconfirmed = Confirmed("ports", "a", "b", Outcome::kHang, Outcome::kSkip);
  EXPECT_EQ(analysis::ConfirmationOf(unconfirmed.evidence), kUnconfirmed);
  EXPECT_EQ(analysis::UnconfirmedWhy(unconfirmed.evidence),
            "the retest ended skip: a -> b: filtered");
  EXPECT_EQ(analysis::ConfirmationOf(nlohmann::json::object()), "");
  EXPECT_EQ(analysis::UnconfirmedWhy({{"confirmation", kUnconfirmed}}), "it was not retested");
  EXPECT_EQ(analysis::UnconfirmedWhy({{"confirmation", kConfirmed}}), "");
}

}  // namespace
}  // namespace cc
