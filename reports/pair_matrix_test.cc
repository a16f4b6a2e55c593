#include "reports/pair_matrix.h"

#include <gtest/gtest.h>

#include "reports/terminal.h"

namespace cc {
namespace {

RunData Ports(int n, int blocked_dst, int one_way_src, int one_way_dst) {
  RunData d;
  std::vector<std::string> names;
  for (int i = 1; i <= n; ++i) names.push_back("n" + std::to_string(i));
  d.run.meta["nodes"] = names;
  for (int a = 1; a <= n; ++a) {
    for (int b = 1; b <= n; ++b) {
      if (a == b) continue;
      PairResult r;
      r.stage = "ports";
      r.check = "tcp/29500";
      r.src = names[a - 1];
      r.dst = names[b - 1];
      bool bad = b == blocked_dst || (a == one_way_src && b == one_way_dst);
      r.outcome = bad ? Outcome::kFail : Outcome::kPass;
      d.pair_results.push_back(r);
    }
  }
  return d;
}

TEST(PairMatrix, AlikeNodesFoldIntoOneRowAndColumn) {
  auto ms = BuildPairMatrices(Ports(8, 3, 1, 2));
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].labels, (std::vector<std::string>{"n1", "n2", "n3", "n[4-8]"}));
  EXPECT_EQ(RenderMatrixText(ms[0], false),
            "             a b c d\n"
            "    a n1       X X .\n"
            "    b n2     .   X .\n"
            "    c n3     . .   .\n"
            "    d n[4-8] . . X .");
}

TEST(PairMatrix, UnfoldedGivesOneRowPerNode) {
  MatrixOptions o;
  o.fold = false;
  auto ms = BuildPairMatrices(Ports(5, 0, 0, 0), o);
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].labels.size(), 5u);
  EXPECT_EQ(CellChar(ms[0].cells[0][0]), ' ');
  EXPECT_EQ(CellChar(ms[0].cells[0][1]), '.');
}

TEST(PairMatrix, ACleanClusterFoldsIntoOneCell) {
  auto ms = BuildPairMatrices(Ports(6, 0, 0, 0));
  ASSERT_EQ(ms[0].labels, std::vector<std::string>{"n[1-6]"});
  EXPECT_EQ(CellChar(ms[0].cells[0][0]), '.');
  EXPECT_EQ(ms[0].cells[0][0].tested, 30);
}

TEST(PairMatrix, UndirectedChecksAreMirroredWithValues) {
  RunData d;
  d.run.meta["nodes"] = {"a", "b", "c"};
  for (auto [s, t, v] : {std::tuple{"a", "b", 20.0}, {"a", "c", 9.0}, {"b", "c", 21.0}}) {
    PairResult r;
    r.stage = "nccl";
    r.check = "allreduce";
    r.src = s;
    r.dst = t;
    r.outcome = Outcome::kPass;
    r.value = v;
    r.unit = "GB/s";
    d.pair_results.push_back(r);
  }
  MatrixOptions o;
  o.fold = false;
  auto m = BuildPairMatrices(d, o)[0];
  EXPECT_FALSE(m.directed);
  EXPECT_TRUE(m.has_values);
  EXPECT_EQ(*m.cells[2][0].min_value, 9.0);
  EXPECT_EQ(*m.cells[0][2].min_value, 9.0);
}

}  // namespace
}  // namespace cc
