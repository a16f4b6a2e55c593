#include "orchestrator/diff.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

RunData MakeRun(int64_t id, std::vector<std::string> nodes) {
  RunData d;
  d.run.id = id;
  d.run.meta["nodes"] = nodes;
  return d;
}

void Node(RunData& d, const std::string& node, const std::string& check, Outcome o,
          const std::string& value) {
  NodeResult r;
  r.node = node;
  r.stage = "parity";
  r.check = check;
  r.outcome = o;
  r.value = value;
  d.node_results.push_back(r);
}

void Pair(RunData& d, const std::string& src, const std::string& dst, Outcome o,
          std::optional<double> value, const std::string& message = "") {
  PairResult r;
  r.stage = "nccl";
  r.check = "allreduce";
  r.src = src;
  r.dst = dst;
  r.outcome = o;
  r.value = value;
  r.unit = "GB/s";
  r.message = message;
  d.pair_results.push_back(r);
}

// Four nodes, every pair at 20 GB/s, gpu02's driver odd in `a` only.
std::pair<RunData, RunData> Pair41And42() {
  std::vector<std::string> nodes{"gpu01", "gpu02", "gpu03", "gpu04"};
  RunData a = MakeRun(41, nodes), b = MakeRun(42, nodes);
  for (const auto& n : nodes) {
    Node(a, n, "driver", n == "gpu02" ? Outcome::kFail : Outcome::kPass,
         n == "gpu02" ? "535.104.05" : "550.54.15");
    Node(b, n, "driver", Outcome::kPass, "550.54.15");
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t j = i + 1; j < nodes.size(); ++j) {
      Pair(a, nodes[i], nodes[j], Outcome::kPass, 20.0);
      bool broken = i == 0 && j == 2;
      Pair(b, nodes[i], nodes[j], broken ? Outcome::kFail : Outcome::kPass,
           broken ? std::nullopt : std::optional<double>(20.5), broken ? "NCCL WARN error 12" : "");
    }
  }
  return {a, b};
}

TEST(Diff, OneLinkRegressedAndOneNodeRecoveredSaysExactlyThat) {
  auto [a, b] = Pair41And42();
  RunDiff d = DiffRuns(a, b);
  EXPECT_EQ(RenderDiff(d),
            "run 41 -> run 42: 1 regressed, 1 recovered, 0 slower, 0 faster, 0 nodes added, "
            "0 nodes removed\n"
            "regressed\n"
            "  nccl allreduce gpu01 <-> gpu03: pass -> fail (NCCL WARN error 12)\n"
            "recovered\n"
            "  gpu02 parity/driver: fail -> pass (535.104.05 -> 550.54.15)\n");
  EXPECT_TRUE(d.worse());
}

TEST(Diff, TheSameRunHasNoChanges) {
  auto [a, b] = Pair41And42();
  RunDiff d = DiffRuns(b, b);
  EXPECT_TRUE(d.regressed.empty());
  EXPECT_TRUE(d.recovered.empty());
  EXPECT_FALSE(d.worse());
}

TEST(Diff, BandwidthCountsOnlyBeyondTheTolerance) {
  std::vector<std::string> nodes{"n1", "n2"};
  RunData a = MakeRun(1, nodes), b = MakeRun(2, nodes);
  Pair(a, "n1", "n2", Outcome::kPass, 20.0);
  Pair(b, "n2", "n1", Outcome::kPass, 17.0);  // stored the other way round
  EXPECT_EQ(DiffRuns(a, b).slower.size(), 1u);
  EXPECT_EQ(DiffRuns(a, b).slower[0].ToString(),
            "nccl allreduce n2 <-> n1: 20.0 -> 17.0 GB/s (-15%)");
  DiffOptions lax;
  lax.tolerance = 0.2;
  EXPECT_TRUE(DiffRuns(a, b, lax).slower.empty());
  EXPECT_EQ(DiffRuns(b, a).faster.size(), 1u);
}

TEST(Diff, NodesAddedAndRemovedAreListed) {
  RunData a = MakeRun(1, {"n1", "n2"}), b = MakeRun(2, {"n2", "n3"});
  RunDiff d = DiffRuns(a, b);
  EXPECT_EQ(d.nodes_added, std::vector<std::string>{"n3"});
  EXPECT_EQ(d.nodes_removed, std::vector<std::string>{"n1"});
}

TEST(Diff, AFailureThatBecameUntestedIsNotARecovery) {
  RunData a = MakeRun(1, {"n1"}), b = MakeRun(2, {"n1"});
  Node(a, "n1", "driver", Outcome::kFail, "1");
  Node(b, "n1", "driver", Outcome::kError, "");
  RunDiff d = DiffRuns(a, b);
  EXPECT_TRUE(d.recovered.empty());
  EXPECT_TRUE(d.regressed.empty());
}

TEST(Diff, JsonListsTheChanges) {
  auto [a, b] = Pair41And42();
  auto j = DiffToJson(DiffRuns(a, b));
  ASSERT_EQ(j["regressed"].size(), 1u);
  EXPECT_EQ(j["regressed"][0]["src"], "gpu01");
  EXPECT_EQ(j["recovered"][0]["node"], "gpu02");
}

}  // namespace
}  // namespace cc
