#include "orchestrator/run_command.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "build_paths.h"
#include "common/outcome.h"
#include "orchestrator/history_command.h"

namespace cc {
namespace {

namespace fs = std::filesystem;

// Everything a FILE* received, read back from the start.
std::string Contents(std::FILE* f) {
  std::string s;
  std::rewind(f);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
  return s;
}

// Two local nodes (agents on this host) judged against an OS pin no host
// has, so the run stores results and the analysis has verdicts to print.
// HOME is the test's own folder, without rc files: the facts stage reads
// a login shell's environment, and this host's rc files (a pyenv rehash
// waiting on its lock) can take a minute; the document is under test, not
// the host.
std::string Inventory(const std::string& home) {
  return R"(name = "json"
transport = "local"
[[nodes]]
name = "sim[1-2]"
env = { HOME = ")" +
         home + R"(" }
[expect]
os = "Plan 9"
[stages]
run = ["facts", "parity"]
)";
}

TEST(RunCommand, RunJsonIsTheDocumentReportJsonPrintsForTheSameRun) {
  char tmpl[] = "/tmp/cc_run_json_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  std::ofstream(dir + "/inv.toml") << Inventory(dir);

  RunOptions run;
  run.inventory_path = dir + "/inv.toml";
  run.db_path = dir + "/cc.db";
  run.agent_binary = CLUSTERCHECK_BINARY_DIR "/clustercheck-agent";
  run.json = true;
  std::FILE* run_out = std::tmpfile();
  std::FILE* run_err = std::tmpfile();
  run.out = run_out;
  run.err = run_err;
  EXPECT_EQ(RunClusterCheck(run), kExitFailed) << Contents(run_err);

  ReportOptions report;
  report.db_path = run.db_path;
  report.json = true;
  std::FILE* report_out = std::tmpfile();
  report.out = report_out;
  report.err = run_err;
  EXPECT_EQ(ReportCommand(report), kExitOk) << Contents(run_err);

  auto from_run = nlohmann::json::parse(Contents(run_out), nullptr, false);
  auto from_report = nlohmann::json::parse(Contents(report_out), nullptr, false);
  std::fclose(run_out);
  std::fclose(run_err);
  std::fclose(report_out);
  fs::remove_all(dir);

  ASSERT_FALSE(from_run.is_discarded()) << "run --json printed no JSON";
  ASSERT_FALSE(from_report.is_discarded()) << "report --json printed no JSON";
  // The pin fails on both nodes: the document carries verdicts, so equal
  // documents mean more than two empty lists.
  ASSERT_FALSE(from_run["verdicts"].empty()) << from_run.dump(2);
  EXPECT_EQ(from_run["run"]["status"], "done");
  EXPECT_EQ(from_run, from_report) << "run --json:\n"
                                   << from_run.dump(2) << "\nreport --json:\n"
                                   << from_report.dump(2);
}

}  // namespace
}  // namespace cc
