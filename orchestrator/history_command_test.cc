#include "orchestrator/history_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "build_paths.h"
#include "orchestrator/store/store.h"
#include "reports/sample_runs_test.h"

namespace cc {
namespace {

// What a command prints on `out`; its stderr is kept for failure messages.
std::string Output(const std::function<int(std::FILE* out, std::FILE* err)>& command,
                   std::string* err_text) {
  char* out_buf = nullptr;
  char* err_buf = nullptr;
  size_t out_len = 0, err_len = 0;
  std::FILE* out = open_memstream(&out_buf, &out_len);
  std::FILE* err = open_memstream(&err_buf, &err_len);
  int rc = command(out, err);
  std::fclose(out);
  std::fclose(err);
  std::string text(out_buf, out_len);
  *err_text = std::string(err_buf, err_len) + " (exit " + std::to_string(rc) + ")";
  std::free(out_buf);
  std::free(err_buf);
  return text;
}

// What `report` with `o` prints on its out; its stderr goes to `err`.
std::string ReportOutput(ReportOptions o, std::string* err) {
  return Output(
      [&](std::FILE* out, std::FILE* e) {
        o.out = out;
        o.err = e;
        return ReportCommand(o);
      },
      err);
}

// tests/fixtures/store-v1-sample-runs.db holds the report tests' sample
// runs as clustercheck wrote them before schema 2 (main at 2f481f7), when
// the ports stage stored its verdicts as "verdict:<kind>" node results.
class Schema1Database : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cc-history-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    old_db_ = dir_ + "/old.db";
    new_db_ = dir_ + "/new.db";
    std::filesystem::copy_file(std::string(CLUSTERCHECK_FIXTURES) + "/store-v1-sample-runs.db",
                               old_db_);
    auto store = Store::Open(new_db_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto ids = testdata::WriteSampleRuns(**store);
    ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    ASSERT_EQ(ids->faulty, 3) << "the fixture's run ids";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // `report` of one run of `db`, as JSON or for the terminal.
  std::string Report(const std::string& db, int64_t run, bool json) {
    ReportOptions o;
    o.db_path = db;
    o.run_id = run;
    o.json = json;
    std::string err;
    std::string out = ReportOutput(o, &err);
    EXPECT_FALSE(out.empty()) << db << " run " << run << ": " << err;
    return out;
  }

  std::string dir_, old_db_, new_db_;
};

TEST_F(Schema1Database, HistoryListsTheSameRunsAndVerdictsAsANewDatabase) {
  std::string err_old, err_new;
  std::string old_history = Output(
      [&](std::FILE* out, std::FILE* err) { return HistoryCommand(old_db_, out, err); }, &err_old);
  std::string new_history = Output(
      [&](std::FILE* out, std::FILE* err) { return HistoryCommand(new_db_, out, err); }, &err_new);
  EXPECT_EQ(old_history, new_history) << err_old << "\n" << err_new;
  EXPECT_NE(old_history.find("\n3 "), std::string::npos) << old_history;
}

TEST_F(Schema1Database, ReportRendersEveryRunAsANewDatabaseDoes) {
  for (int64_t run : {1, 2, 3}) {
    for (bool json : {false, true}) {
      EXPECT_EQ(Report(old_db_, run, json), Report(new_db_, run, json))
          << "run " << run << (json ? " --json" : "");
    }
  }
  EXPECT_NE(Report(old_db_, 3, false).find("port-blocked"), std::string::npos)
      << "the ports stage's own verdict, read from the old rows";
}

// Every file `report` writes for `run` of `db`, read back; "" for one it
// did not write.
struct Written {
  std::string terminal, json, html, junit, err;
};

Written ReportInEveryFormat(const std::string& dir, const std::string& db, int64_t run) {
  Written w;
  ReportOptions o;
  o.db_path = db;
  o.run_id = run;
  o.html_path = dir + "/r.html";
  o.junit_path = dir + "/r.xml";
  auto read = [](const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    std::remove(path.c_str());
    return s.str();
  };
  for (bool json : {false, true}) {
    o.json = json;
    std::string err;
    (json ? w.json : w.terminal) = ReportOutput(o, &err);
    w.err += err;
    w.html = read(o.html_path);
    w.junit = read(o.junit_path);
  }
  return w;
}

void ExpectEveryFormat(const Written& w, const std::string& what) {
  EXPECT_NE(w.terminal.find("\nverdicts, worst first\n"), std::string::npos) << what << w.err;
  EXPECT_TRUE(nlohmann::json::accept(w.json)) << what << w.err;
  EXPECT_NE(w.html.find("</html>\n"), std::string::npos) << what << w.err;
  EXPECT_NE(w.junit.find("</testsuites>\n"), std::string::npos) << what << w.err;
}

TEST_F(Schema1Database, ReportWritesEveryFormatForEveryRun) {
  for (int64_t run : {1, 2, 3}) {
    ExpectEveryFormat(ReportInEveryFormat(dir_, old_db_, run), "run " + std::to_string(run));
  }
}

// As another version or a bug stored it: a ports verdict whose own
// evidence "symptoms" is a list of {symptom, probes, states} (the shape
// the cross-stage fold once appended to and read "stage" from), a verdict
// whose evidence is not an object, and a stage's meta of other types.
TEST_F(Schema1Database, ARunWithEvidenceAndMetaOfOtherShapesIsReportedWithErrorLines) {
  {
    auto store = Store::Open(new_db_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    Verdict v;
    v.kind = "port-blocked";
    v.stage = "ports";
    v.check = "tcp/ephemeral";
    v.nodes = {"gpu04"};
    v.summary = "gpu04's INPUT drops tcp 32768-60999";
    v.evidence = {{"stage_kind", "ephemeral"},
                  {"symptoms",
                   {{{"symptom", "peers cannot reach gpu04's ephemeral ports"},
                     {"probes", 8},
                     {"states", "filtered"}}}}};
    ASSERT_TRUE((*store)->AddVerdict(3, v).ok());
    v.kind = "in-use";
    v.severity = Outcome::kWarn;
    v.check = "tcp/29501";
    v.nodes = {};
    v.summary = "tcp/29501 is taken on every node";
    v.evidence = 7;
    ASSERT_TRUE((*store)->AddVerdict(3, v).ok());
    ASSERT_TRUE((*store)->SetRunMeta(3, "health", {{"nodes", "five"}}).ok());
    ASSERT_TRUE((*store)->SetRunMeta(3, "bytes_pushed", "lots").ok());
  }
  Written w = ReportInEveryFormat(dir_, new_db_, 3);
  ExpectEveryFormat(w, "run 3");
  for (const char* line :
       {"error: run 3: verdict in-use (ports / tcp/29501): evidence: an object expected, a "
        "number found (7)",
        "error: run 3: meta health: nodes: an integer from 0 to 2147483647 expected, a string "
        "found (\"five\")",
        "error: run 3: meta: bytes_pushed:"}) {
    EXPECT_NE(w.terminal.find(line), std::string::npos) << line << "\n" << w.terminal;
  }
  EXPECT_NE(w.terminal.find("gpu04's INPUT drops tcp 32768-60999"), std::string::npos)
      << w.terminal;
  EXPECT_NE(w.html.find("error: run 3: verdict in-use (ports / tcp/29501)"), std::string::npos);
}

}  // namespace
}  // namespace cc
