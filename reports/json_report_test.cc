#include "reports/json_report.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "build_paths.h"
#include "orchestrator/stages/stages.h"
#include "reports/sample_runs_test.h"

namespace cc {
namespace {

// The faulty sample run (sample_runs_test.h), as a report loads it.
RunData FaultySampleRun() {
  char tmpl[] = "/tmp/cc-json-report-XXXXXX";
  EXPECT_NE(mkdtemp(tmpl), nullptr);
  RunData data;
  {
    auto store = Store::Open(std::string(tmpl) + "/cc.db");
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    auto ids = testdata::WriteSampleRuns(**store);
    EXPECT_TRUE(ids.ok()) << ids.status().ToString();
    auto loaded = LoadRunData(**store, ids->faulty, MatrixCheck);
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    if (loaded.ok()) data = *loaded;
  }
  std::filesystem::remove_all(tmpl);
  return data;
}

// The keys README.md's "JSON of a run" table lists: its rows "| `key` |".
std::set<std::string> ReadmeKeys() {
  std::ifstream in(CLUSTERCHECK_SOURCE_DIR "/README.md");
  std::stringstream text;
  text << in.rdbuf();
  std::string readme = text.str();
  size_t begin = readme.find("\n## JSON of a run");
  if (begin == std::string::npos) return {};
  size_t end = readme.find("\n## ", begin + 1);
  std::string section = readme.substr(begin, end - begin);
  std::set<std::string> keys;
  std::regex row(R"(\n\| `([a-z_]+)` \|)");
  for (std::sregex_iterator it(section.begin(), section.end(), row), stop; it != stop; ++it) {
    keys.insert((*it)[1]);
  }
  return keys;
}

TEST(JsonReport, TheReadmeListsExactlyTheTopLevelKeys) {
  RunData data = FaultySampleRun();
  // A run that retested something has the one optional key too.
  data.run.meta["retests.ports"] = {{"retested", 2}, {"confirmed", 1}, {"flaky", 1}};
  nlohmann::json j = ReportJson(data, Analyze(data));
  std::set<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.insert(key);
  EXPECT_EQ(keys, ReadmeKeys()) << "README.md \"JSON of a run\" and ReportJson disagree";
}

TEST(JsonReport, RetestsAppearOnlyWhenTheRunRetestedSomething) {
  RunData data = FaultySampleRun();
  EXPECT_FALSE(ReportJson(data, Analyze(data)).contains("retests"));
  data.run.meta["retests.ports"] = {{"retested", 2}, {"confirmed", 1}, {"flaky", 1}};
  auto j = ReportJson(data, Analyze(data));
  EXPECT_EQ(j["retests"]["ports"]["flaky"], 1) << j["retests"].dump();
}

// What WriteReportJson writes, its pair results from `data` itself.
std::string Written(const RunData& data) {
  std::string text;
  Status s = WriteReportJson([&](std::string_view part) { text += part; }, data, Analyze(data),
                             [&](const std::function<void(PairResult &&)>& each) {
                               data.ForEachPairResult([&](PairResult r) { each(std::move(r)); });
                               return Status::Ok();
                             });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return text;
}

TEST(JsonReport, WrittenPieceByPieceItIsTheDocumentsDump) {
  RunData data = FaultySampleRun();
  ASSERT_FALSE(data.pair_results.empty());
  EXPECT_EQ(Written(data), ReportJson(data, Analyze(data)).dump(2) + "\n");
  data.pair_results.clear();
  data.routine_pairs = RoutinePairs();
  EXPECT_EQ(Written(data), ReportJson(data, Analyze(data)).dump(2) + "\n");
}

}  // namespace
}  // namespace cc
