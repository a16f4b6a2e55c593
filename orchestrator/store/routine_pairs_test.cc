#include "orchestrator/store/routine_pairs.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

PairResult Probe(const std::string& src, const std::string& dst, Outcome o = Outcome::kPass) {
  PairResult r;
  r.stage = "ports";
  r.src = src;
  r.dst = dst;
  r.check = "tcp/29500";
  r.outcome = o;
  r.state = o == Outcome::kPass ? "open" : "filtered";
  r.message = "a message";
  r.evidence = {{"kind", "listed"}, {"ms", 0.4}};
  r.at = "2026-12-04T10:00:00Z";
  return r;
}

TEST(RoutinePairs, OnlyPassesAndSkipsThatWereNotRetestedNorFoundSlowAreRoutine) {
  EXPECT_TRUE(IsRoutinePairResult(Probe("a", "b")));
  EXPECT_TRUE(IsRoutinePairResult(Probe("a", "b", Outcome::kSkip)));
  for (Outcome o : {Outcome::kWarn, Outcome::kFail, Outcome::kHang, Outcome::kError}) {
    EXPECT_FALSE(IsRoutinePairResult(Probe("a", "b", o))) << OutcomeName(o);
  }
  PairResult retested = Probe("a", "b");
  retested.evidence["confirmation"] = "cleared";
  EXPECT_FALSE(IsRoutinePairResult(retested));
  PairResult slow = Probe("a", "b");
  slow.evidence["speed"] = {{"slow", true}, {"why", "40% of the median"}};
  EXPECT_FALSE(IsRoutinePairResult(slow));
  slow.evidence["speed"]["slow"] = false;
  EXPECT_TRUE(IsRoutinePairResult(slow));
}

TEST(RoutinePairs, ResultsThatDifferOnlyInTheirNodesShareOneGroup) {
  RoutinePairs rp;
  for (const char* dst : {"b", "c", "d"}) ASSERT_TRUE(rp.Add(Probe("a", dst), "tcp/29500"));
  ASSERT_TRUE(rp.Add(Probe("b", "a", Outcome::kSkip), "tcp/29500"));
  EXPECT_EQ(rp.size(), 4u);
  EXPECT_EQ(rp.groups().size(), 2u);
  EXPECT_EQ(rp.nodes(), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(rp.last_at(), "2026-12-04T10:00:00Z");
}

TEST(RoutinePairs, MaterializedAResultKeepsWhatTheAnalysisReads) {
  RoutinePairs rp;
  PairResult bw = Probe("n1", "n2");
  bw.stage = "mpi";
  bw.check = "bandwidth";
  bw.value = 0.019300000000000001;
  bw.unit = "GB/s";
  bw.evidence = {{"speed", {{"judged_by", "mpi"}, {"slow", false}}}};
  PairResult skip = Probe("n2", "n1", Outcome::kSkip);
  skip.message = "excluded: decoy";
  ASSERT_TRUE(rp.Add(bw, "bandwidth"));
  ASSERT_TRUE(rp.Add(skip, "tcp/ephemeral"));
  PairResult a = rp.Materialize(rp.entries()[0]);
  EXPECT_EQ(a.stage, "mpi");
  EXPECT_EQ(a.src, "n1");
  EXPECT_EQ(a.dst, "n2");
  EXPECT_EQ(a.check, "bandwidth");
  EXPECT_EQ(a.outcome, Outcome::kPass);
  EXPECT_EQ(a.state, "open");
  ASSERT_TRUE(a.value.has_value());
  EXPECT_EQ(*a.value, 0.019300000000000001);  // exactly
  EXPECT_EQ(a.unit, "GB/s");
  EXPECT_EQ(a.message, "");  // a pass's message stays in the store
  EXPECT_EQ(a.evidence, (nlohmann::json{{"speed", {{"slow", false}}}}));
  EXPECT_EQ(rp.groups()[0].matrix_check, "bandwidth");
  PairResult b = rp.Materialize(rp.entries()[1]);
  EXPECT_EQ(b.outcome, Outcome::kSkip);
  EXPECT_EQ(b.message, "excluded: decoy");  // a skip says why
  EXPECT_FALSE(b.value.has_value());
  EXPECT_TRUE(b.evidence.empty());
  EXPECT_EQ(rp.group(rp.entries()[1]).matrix_check, "tcp/ephemeral");
}

TEST(RoutinePairs, WithoutLeavesOutEveryResultOfTheNodes) {
  RoutinePairs rp;
  for (const char* src : {"a", "b", "c"}) {
    for (const char* dst : {"a", "b", "c"}) {
      if (std::string(src) != dst) rp.Add(Probe(src, dst), "tcp/29500");
    }
  }
  RoutinePairs without = rp.Without({"b"});
  ASSERT_EQ(without.size(), 2u);
  for (const auto& e : without.entries()) {
    EXPECT_NE(without.node(e.src), "b");
    EXPECT_NE(without.node(e.dst), "b");
  }
  EXPECT_EQ(rp.size(), 6u);
}

}  // namespace
}  // namespace cc
