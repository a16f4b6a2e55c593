#include "reports/retests.h"

#include <gtest/gtest.h>

#include "reports/html.h"
#include "reports/json_report.h"
#include "reports/terminal.h"

namespace cc {
namespace {

RunData WithStages() {
  RunData d;
  d.run.id = 5;
  d.run.meta["nodes"] = {"n1", "n2"};
  for (const char* stage : {"nics", "ports"}) {
    PairResult r;
    r.stage = stage;
    r.check = "tcp/22";
    r.src = "n1";
    r.dst = "n2";
    r.outcome = Outcome::kPass;
    d.pair_results.push_back(r);
  }
  return d;
}

TEST(Retests, StagesThatRetestedAreListedInRunOrder) {
  RunData d = WithStages();
  d.run.meta["retests.ports"] = {
      {"retested", 12}, {"confirmed", 10}, {"flaky", 2}, {"unconfirmed", 0}};
  d.run.meta["retests.nics"] = {
      {"retested", 1}, {"confirmed", 0}, {"flaky", 0}, {"unconfirmed", 1}};
  d.run.meta["retests.mpi"] = {{"retested", 0}, {"confirmed", 0}, {"flaky", 0}, {"unconfirmed", 0}};
  d.run.meta["retests.bogus"] = "12";
  auto rs = RetestsOf(d);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].stage, "nics");
  EXPECT_EQ(RetestLine(rs[0]), "1 retested: 1 unconfirmed");
  EXPECT_EQ(rs[1].stage, "ports");
  EXPECT_EQ(RetestLine(rs[1]), "12 retested: 10 confirmed, 2 flaky");
  auto j = RetestsJson(rs);
  EXPECT_EQ(j["ports"]["flaky"], 2);
  EXPECT_EQ(j["nics"]["retested"], 1);
  EXPECT_FALSE(j.contains("mpi"));
}

TEST(Retests, EveryReportPrintsALinePerStageThatRetested) {
  RunData d = WithStages();
  d.run.meta["retests.ports"] = {
      {"retested", 3}, {"confirmed", 1}, {"flaky", 2}, {"unconfirmed", 0}};
  std::string text = RenderTerminal(d, {});
  EXPECT_NE(text.find("\n  ports    1 pair results"), std::string::npos) << text;
  EXPECT_NE(text.find("\n" + std::string(11, ' ') + "retests: 3 retested: 1 confirmed, 2 flaky\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("retests.ports"), std::string::npos);
  auto j = ReportJson(d, {});
  EXPECT_EQ(j["retests"]["ports"]["confirmed"], 1);
  std::string html = RenderHtml(d, {}, {});
  EXPECT_NE(
      html.find("<dt>retests ports</dt><dd class=\"mono\">3 retested: 1 confirmed, 2 flaky</dd>"),
      std::string::npos);
  EXPECT_EQ(html.find("retests.ports"), std::string::npos);
}

TEST(Retests, ARunWithoutRetestsSaysNothingAboutThem) {
  RunData d = WithStages();
  EXPECT_TRUE(RetestsOf(d).empty());
  EXPECT_EQ(RenderTerminal(d, {}).find("retests"), std::string::npos);
  EXPECT_FALSE(ReportJson(d, {}).contains("retests"));
  EXPECT_EQ(RenderHtml(d, {}, {}).find("retests"), std::string::npos);
}

}  // namespace
}  // namespace cc
