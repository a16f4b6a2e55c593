#include "orchestrator/history_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>

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
    std::string out = Output(
        [&](std::FILE* out, std::FILE* e) {
          o.out = out;
          o.err = e;
          return ReportCommand(o);
        },
        &err);
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

}  // namespace
}  // namespace cc
