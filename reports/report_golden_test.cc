// Golden-file tests of the terminal and JSON reports of a stored run with
// faults in every stage (sample_runs_test.h). To regenerate after an
// intended change: CLUSTERCHECK_UPDATE_GOLDEN=1 clustercheck_tests
// --gtest_filter='ReportGolden.*', then review the diff of
// tests/fixtures/golden/.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "build_paths.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/stages/stages.h"
#include "reports/json_report.h"
#include "reports/sample_runs_test.h"
#include "reports/terminal.h"

namespace cc {
namespace {

std::string GoldenPath(const std::string& name) {
  return std::string(CLUSTERCHECK_FIXTURES) + "/golden/" + name;
}

bool Updating() {
  const char* u = std::getenv("CLUSTERCHECK_UPDATE_GOLDEN");
  return u && std::string(u) == "1";
}

// Compares with the golden file, or rewrites it when updating. On a
// mismatch, names the first differing line.
void ExpectGolden(const std::string& name, const std::string& actual) {
  std::string path = GoldenPath(name);
  if (Updating()) {
    std::ofstream(path) << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << path << " missing; run with CLUSTERCHECK_UPDATE_GOLDEN=1";
  std::stringstream want;
  want << in.rdbuf();
  if (want.str() == actual) return;
  std::istringstream a(actual), w(want.str());
  std::string la, lw;
  int line = 0;
  while (true) {
    ++line;
    bool ga = static_cast<bool>(std::getline(a, la));
    bool gw = static_cast<bool>(std::getline(w, lw));
    if (!ga && !gw) break;
    if (la != lw || ga != gw) {
      ADD_FAILURE() << path << ":" << line << " differs\n  want: " << lw << "\n  have: " << la
                    << "\n(CLUSTERCHECK_UPDATE_GOLDEN=1 rewrites it after an intended change)";
      return;
    }
  }
  ADD_FAILURE() << path << " differs in line endings";
}

class ReportGolden : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cc-golden-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto store = Store::Open(dir_ + "/cc.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    auto ids = testdata::WriteSampleRuns(*store_);
    ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    auto data = LoadRunData(*store_, ids->faulty, MatrixCheck);
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    data_ = *data;
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  std::string dir_;
  std::unique_ptr<Store> store_;
  RunData data_;
};

void ExpectTerminalGolden(const RunData& data) {
  TerminalOptions o;
  o.db_path = "/var/lib/clustercheck/cc.db";
  ExpectGolden("report.txt", RenderTerminal(data, o));
}

// As the commands print it: the pair results in full, from the store.
void ExpectJsonGolden(Store& store, const RunData& data) {
  std::string text;
  Status s = WriteReportJson([&](std::string_view part) { text += part; }, data, Analyze(data),
                             PairRowsOf(store, data.run.id));
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectGolden("report.json", text);
}

TEST_F(ReportGolden, TerminalReportOfAFaultyRunMatchesTheGolden) { ExpectTerminalGolden(data_); }

TEST_F(ReportGolden, JsonReportOfAFaultyRunMatchesTheGolden) { ExpectJsonGolden(*store_, data_); }

// The same sample runs as written by clustercheck before schema 2 (main at
// 2f481f7, testdata::WriteSampleRuns into a file; the faulty run is 3),
// when the ports stage stored its verdicts as "verdict:<kind>" node
// results. Opening it migrates a copy; the reports must not tell the
// difference.
class ReportGoldenOfASchema1Database : public ReportGolden {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cc-golden-v1-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::filesystem::copy_file(std::string(CLUSTERCHECK_FIXTURES) + "/store-v1-sample-runs.db",
                               dir_ + "/cc.db");
    auto store = Store::Open(dir_ + "/cc.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    EXPECT_EQ(store_->schema_version(), Store::kSchemaVersion);
    auto data = LoadRunData(*store_, 3, MatrixCheck);
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    data_ = *data;
    // The goldens are rewritten from the new code only.
    if (Updating()) GTEST_SKIP();
  }
};

TEST_F(ReportGoldenOfASchema1Database, TerminalReportMatchesTheGolden) {
  ExpectTerminalGolden(data_);
}

TEST_F(ReportGoldenOfASchema1Database, JsonReportMatchesTheGolden) {
  ExpectJsonGolden(*store_, data_);
}

TEST_F(ReportGolden, TheFaultyRunNamesAFaultInEveryStage) {
  auto vs = Analyze(data_);
  std::set<std::string> stages, kinds;
  for (const auto& v : vs) {
    stages.insert(v.stage);
    kinds.insert(v.kind);
  }
  for (const char* s : {"connect", "parity", "nics", "ports", "nccl", "mpi"}) {
    EXPECT_TRUE(stages.count(s)) << "no verdict in stage " << s;
  }
  for (const char* k : {"unreachable", "host-key", "hang", "odd-version", "bad-node",
                        "port-blocked", "one-way", "bandwidth-outlier", "bad-link"}) {
    EXPECT_TRUE(kinds.count(k)) << "no verdict of kind " << k;
  }
}

TEST_F(ReportGolden, ColourAppearsOnlyWhenAsked) {
  TerminalOptions o;
  EXPECT_EQ(RenderTerminal(data_, o).find('\033'), std::string::npos);
  o.color = true;
  EXPECT_NE(RenderTerminal(data_, o).find("\033[31;1mX\033[0m"), std::string::npos);
}

}  // namespace
}  // namespace cc
