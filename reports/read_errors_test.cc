#include "reports/read_errors.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "reports/html.h"
#include "reports/terminal.h"

namespace cc {
namespace {

using nlohmann::json;

RunData RunWithAStoredVerdict(json evidence) {
  RunData d;
  d.run.id = 7;
  d.run.meta = {{"nodes", {"n1", "n2"}}};
  Verdict v;
  v.kind = "port-blocked";
  v.stage = "ports";
  v.check = "tcp/29500";
  v.nodes = {"n2"};
  v.summary = "n2 filters tcp/29500 from every peer";
  v.evidence = std::move(evidence);
  d.verdicts.push_back(v);
  return d;
}

std::vector<Verdict> Throws(const RunData&, const AnalysisOptions&) {
  throw std::runtime_error("type must be string, but is number");
}

TEST(ReadErrors, AnAnalysisThatThrowsIsAnErrorVerdictBeforeTheStoredOnes) {
  RunData d = RunWithAStoredVerdict(json::object());
  std::vector<Verdict> vs = AnalyzeStoredRun(d, {}, Throws);
  ASSERT_EQ(vs.size(), 2u);
  EXPECT_EQ(vs[0].kind, "analysis-error");
  EXPECT_EQ(vs[0].severity, Outcome::kError);
  EXPECT_NE(vs[0].summary.find("run 7"), std::string::npos) << vs[0].summary;
  EXPECT_NE(vs[0].summary.find("type must be string"), std::string::npos) << vs[0].summary;
  EXPECT_EQ(vs[1].kind, "port-blocked");
}

TEST(ReadErrors, AnAnalysisThatWorksIsTakenAsItIs) {
  RunData d = RunWithAStoredVerdict(json::object());
  std::vector<Verdict> want = Analyze(d);
  std::vector<Verdict> got = AnalyzeStoredRun(d);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(VerdictToJson(got[i]), VerdictToJson(want[i]));
}

TEST(ReadErrors, AVerdictWhoseEvidenceIsNotAnObjectIsALineNamingRunVerdictAndField) {
  RunData d = RunWithAStoredVerdict(json::array({1, 2}));
  std::vector<std::string> lines = VerdictReadErrors(d, d.verdicts);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "error: run 7: verdict port-blocked (ports / tcp/29500): evidence: an object "
            "expected, an array found ([1,2])");
  EXPECT_TRUE(VerdictReadErrors(d, RunWithAStoredVerdict(json::object()).verdicts).empty());
}

TEST(ReadErrors, TheTerminalAndThePageShowTheLineAndTheVerdictsAfterIt) {
  RunData d = RunWithAStoredVerdict(7);
  std::string text = RenderTerminal(d, {});
  EXPECT_NE(text.find("  error: run 7: verdict port-blocked (ports / tcp/29500): evidence:"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("n2 filters tcp/29500"), std::string::npos) << text;
  std::string page = RenderHtml(d, Analyze(d));
  EXPECT_NE(page.find("error: run 7: verdict port-blocked"), std::string::npos);
  EXPECT_NE(page.find("</html>"), std::string::npos);
}

TEST(ReadErrors, AStageMetaOfTheWrongShapeIsALineAndTheRestIsRendered) {
  RunData d = RunWithAStoredVerdict(json::object());
  d.run.meta["health"] = {{"nodes", "four"}, {"actions", {{"drain", {"n2", 3}}}}};
  d.run.meta["bytes_pushed"] = "lots";
  std::string text = RenderTerminal(d, {});
  EXPECT_NE(text.find("health: 0 nodes read; drain n2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("error: run 7: meta health: nodes: an integer from 0 to 2147483647 "
                      "expected, a string found (\"four\")"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("error: run 7: meta health: actions.drain[1]: a string expected"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("error: run 7: meta: bytes_pushed:"), std::string::npos) << text;
}

}  // namespace
}  // namespace cc
