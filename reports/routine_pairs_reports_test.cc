// Analysis and reports say the same of a run whether its routine pair
// results are kept in RoutinePairs (as LoadRunData keeps them) or in full
// in pair_results: over the sample runs, which have a fault in every stage.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "orchestrator/analysis/analysis.h"
#include "orchestrator/stages/stages.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/node_table.h"
#include "reports/pair_matrix.h"
#include "reports/sample_runs_test.h"
#include "reports/stage_lines.h"
#include "reports/terminal.h"

namespace cc {
namespace {

// What an operator reads of a verdict (its evidence may lack what a
// routine result does not keep: a pass's message).
std::string Words(const std::vector<Verdict>& vs) {
  std::string out;
  for (const Verdict& v : vs) {
    out +=
        OutcomeName(v.severity) + std::string(" ") + v.kind + " " + v.stage + "/" + v.check + " [";
    for (const auto& n : v.nodes) out += n + " ";
    out += "] ";
    for (const auto& [a, b] : v.pairs) out += a + ">" + b + " ";
    out += v.summary + " -> " + v.next_step + "\n";
  }
  return out;
}

std::string Matrices(const RunData& d) {
  std::string out;
  for (const PairMatrix& m : BuildPairMatrices(d)) {
    out += m.stage + " " + m.check + " " + m.counts.ToString() + "\n" + RenderMatrixText(m, false);
    for (const auto& row : m.cells) {
      for (const MatrixCell& c : row) {
        out += std::to_string(c.tested) + (c.mixed ? "m" : "") + c.state +
               (c.min_value ? std::to_string(*c.min_value) : "") + ",";
      }
    }
    out += "\n";
  }
  return out;
}

class RoutinePairsReports : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cc-routine-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto store = Store::Open(dir_ + "/cc.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    auto ids = testdata::WriteSampleRuns(*store_);
    ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    ids_ = {ids->before, ids->after, ids->faulty};
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // Run `id` as LoadRunData loads it, and with every pair result in full.
  std::pair<RunData, RunData> Both(int64_t id) {
    auto split = LoadRunData(*store_, id, MatrixCheck);
    EXPECT_TRUE(split.ok()) << split.status().ToString();
    RunData full = *split;
    auto all = store_->GetPairResults(id);
    EXPECT_TRUE(all.ok());
    full.pair_results = *all;
    full.routine_pairs = RoutinePairs();
    return {*split, full};
  }
  std::string dir_;
  std::unique_ptr<Store> store_;
  std::vector<int64_t> ids_;
};

TEST_F(RoutinePairsReports, TheSampleRunsHaveRoutineResultsToKeepApart) {
  auto [split, full] = Both(ids_.back());
  EXPECT_GT(split.routine_pairs.size(), 0u);
  EXPECT_EQ(split.PairResultCount(), full.pair_results.size());
  EXPECT_LT(split.pair_results.size(), full.pair_results.size());
}

TEST_F(RoutinePairsReports, AnalysisNamesTheSameVerdicts) {
  for (int64_t id : ids_) {
    auto [split, full] = Both(id);
    EXPECT_EQ(Words(Analyze(split)), Words(Analyze(full))) << "run " << id;
  }
}

TEST_F(RoutinePairsReports, TerminalMatricesJunitNodeTableAndStageLinesAreTheSame) {
  for (int64_t id : ids_) {
    auto [split, full] = Both(id);
    EXPECT_EQ(RenderTerminal(split, {}), RenderTerminal(full, {})) << "run " << id;
    EXPECT_EQ(Matrices(split), Matrices(full)) << "run " << id;
    EXPECT_EQ(RenderJunit(split), RenderJunit(full)) << "run " << id;
    EXPECT_EQ(NodeTableToJson(BuildNodeTable(split)), NodeTableToJson(BuildNodeTable(full)));
    EXPECT_EQ(RenderStageLines(split), RenderStageLines(full)) << "run " << id;
    EXPECT_EQ(VerdictLine(split), VerdictLine(full));
  }
}

TEST_F(RoutinePairsReports, HtmlIsTheSame) {
  for (int64_t id : ids_) {
    auto [split, full] = Both(id);
    EXPECT_EQ(RenderHtml(split, Analyze(split)), RenderHtml(full, Analyze(full))) << "run " << id;
  }
}

}  // namespace
}  // namespace cc
