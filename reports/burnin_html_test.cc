#include "reports/burnin_html.h"

#include <gtest/gtest.h>

#include "reports/burnin_sample_test.h"
#include "reports/heatmap_svg.h"
#include "reports/html.h"

namespace cc {
namespace {

using testdata::SampleBurnIn;

bool Has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

// The fill of the <rect> whose tooltip is `title`.
std::string FillOf(const std::string& svg, const std::string& title) {
  size_t t = svg.find("<title>" + title + "</title>");
  if (t == std::string::npos) return "";
  size_t fill = svg.rfind("fill=\"", t) + 6;
  return svg.substr(fill, svg.find('"', fill) - fill);
}

TEST(BurnInHtml, RateColourIsGreenOnlyAtZeroAndRedAtOne) {
  EXPECT_EQ(RateColour(0), OutcomeColour(Outcome::kPass));
  EXPECT_EQ(RateColour(1), OutcomeColour(Outcome::kFail));
  EXPECT_NE(RateColour(0.01), RateColour(0));
  // Redder as the rate rises: the green channel falls.
  auto green = [](const std::string& c) { return std::stoi(c.substr(3, 2), nullptr, 16); };
  EXPECT_GT(green(RateColour(0.05)), green(RateColour(0.25)));
  EXPECT_GT(green(RateColour(0.25)), green(RateColour(0.75)));
}

TEST(BurnInHtml, CellTitleNamesTheFailedRounds) {
  PairRate p;
  p.a = "gpu01";
  p.b = "gpu03";
  p.check = "tcp/29500";
  p.attempts = 20;
  EXPECT_EQ(RateCellTitle(p), "gpu01 \xE2\x86\x94 gpu03 tcp/29500: 20 of 20 passed");
  p.failures = 3;
  p.failed_rounds = {5, 9, 13};
  EXPECT_EQ(RateCellTitle(p),
            "gpu01 \xE2\x86\x94 gpu03 tcp/29500: 3 of 20 failed (rounds 5, 9, 13)");
  p.failures = 2;
  p.hangs = 1;
  EXPECT_EQ(RateCellTitle(p),
            "gpu01 \xE2\x86\x94 gpu03 tcp/29500: 3 of 20 failed, 1 of them hung (rounds 5, 9, 13)");
}

TEST(BurnInHtml, HeatmapColoursEachTestedPairByItsRateAndGreysTheRest) {
  BurnInSummary s = SampleBurnIn();
  // Drop one pair: its cells must turn grey, on both sides of the diagonal.
  std::erase_if(s.pairs, [](const PairRate& p) {
    return p.stage == "ports" && p.a == "gpu02" && p.b == "gpu06";
  });
  std::string svg = RenderRateHeatmapSvg(s, "ports", "tcp/29500");
  std::string flaky = "gpu01 \xE2\x86\x94 gpu03 tcp/29500: 3 of 20 failed (rounds 5, 9, 13)";
  EXPECT_EQ(FillOf(svg, flaky), RateColour(0.15));
  EXPECT_EQ(FillOf(svg, "gpu01 \xE2\x86\x94 gpu02 tcp/29500: 20 of 20 passed"), RateColour(0));
  // Both halves of the symmetric matrix: two cells per pair.
  size_t first = svg.find(flaky);
  EXPECT_NE(svg.find(flaky, first + 1), std::string::npos);
  EXPECT_TRUE(Has(svg, ">15%</text>"));
  EXPECT_TRUE(Has(svg, ">0%</text>"));
  // 6 diagonal cells and the dropped pair's two are untested.
  size_t grey = 0;
  for (size_t at = svg.find("fill=\"#f1f2f4\"><"); at != std::string::npos;
       at = svg.find("fill=\"#f1f2f4\"><", at + 1))
    ++grey;
  EXPECT_EQ(grey, 8u);
  EXPECT_FALSE(Has(svg, "gpu02 \xE2\x86\x94 gpu06"));
}

TEST(BurnInHtml, HeadingCountsRoundsTimeAndPairsByVerdict) {
  BurnInSummary s = SampleBurnIn();
  s.pairs[2].outcome = Outcome::kFail;  // gpu01 <-> gpu04
  std::string html = RenderBurnInSection(s);
  EXPECT_TRUE(Has(html, "20 of 20 rounds &middot; 2h 0m"));
  // 30 pair checks: the flaky one, the failed one, 28 passed.
  EXPECT_TRUE(Has(html, "pair checks: 28 pass, 1 flaky, 1 fail"));
  s.rounds_planned = 0;  // --for alone
  EXPECT_TRUE(Has(RenderBurnInSection(s), "<small>20 rounds &middot;"));
}

TEST(BurnInHtml, SectionHasBandwidthCountersThatMovedAndGpus) {
  std::string html = RenderBurnInSection(SampleBurnIn());
  EXPECT_TRUE(Has(html, "id=\"burnin-values\""));
  EXPECT_TRUE(Has(html, "nccl allreduce across the cluster"));
  EXPECT_FALSE(Has(html, "ports tcp/29500 per pair"));  // no values, no chart
  EXPECT_TRUE(Has(html, "gpu02 mlx5_0/1 symbol_error"));
  EXPECT_FALSE(Has(html, "link_downed"));  // stayed 0
  EXPECT_TRUE(Has(html, "Counters that moved<small>1 of 2"));
  EXPECT_TRUE(Has(html, "+11 per hour"));
  // The hot node: its slowdowns marked on the charts and listed.
  EXPECT_TRUE(Has(html, "<title>gpu05 GPU 0, round 12: HW thermal slowdown</title>"));
  EXPECT_TRUE(Has(html,
                  "<title>gpu05 GPU 3, round 20: HW thermal slowdown, SW thermal "
                  "slowdown</title>"));
  EXPECT_TRUE(Has(html, "<b>gpu05 GPU 2</b></td><td class=\"mono\">rounds 12-20<"));
  EXPECT_FALSE(Has(html, "<b>gpu04 GPU"));
}

TEST(BurnInHtml, ThermalReasonsAreNvmlsThermalBitsOnly) {
  EXPECT_EQ(ThermalReasonsText(0), "");
  EXPECT_EQ(ThermalReasonsText(0x1 | 0x4), "");  // idle, SW power cap
  EXPECT_EQ(ThermalReasonsText(0x40), "HW thermal slowdown");
  EXPECT_EQ(ThermalReasonsText(0x20 | 0x8), "SW thermal slowdown, HW slowdown");
}

TEST(BurnInHtml, NamesAreEscaped) {
  BurnInSummary s;
  s.nodes = {"<a>", "b&c"};
  PairRate p;
  p.stage = "st<x>";
  p.check = "\"chk\"";
  p.a = "<a>";
  p.b = "b&c";
  p.attempts = 1;
  p.unit = "GB/s";
  p.values = {{1, 60, 10}};
  s.pairs.push_back(p);
  s.counters.push_back({"<a>", "<ctr>", {{1, 0, 0}, {2, 60, 5}}, 300});
  s.gpus.push_back({"b&c", {GpuSample{1, 10, 0, 70.0, 1900.0, 500.0, 0x40}}});
  std::string html = RenderBurnInSection(s);
  EXPECT_FALSE(Has(html, "<a>"));
  EXPECT_FALSE(Has(html, "<ctr>"));
  EXPECT_FALSE(Has(html, "st<x>"));
  EXPECT_FALSE(Has(html, "b&c"));
  EXPECT_TRUE(Has(html, "&lt;a&gt;"));
  EXPECT_TRUE(Has(html, "b&amp;c"));
  EXPECT_TRUE(Has(html, "&quot;chk&quot;"));
}

TEST(BurnInHtml, AnEmptySummaryRendersWithoutCharts) {
  std::string html = RenderBurnInSection(BurnInSummary{});
  EXPECT_TRUE(Has(html, "No pair checks in this burn-in."));
  EXPECT_FALSE(Has(html, "<svg"));
  EXPECT_FALSE(Has(html, "nan"));
}

TEST(BurnInHtml, TheReportHasTheSectionAfterTheNodesOnlyWhenGiven) {
  RunData d;
  d.run.id = 7;
  std::string plain = RenderHtml(d, {});
  EXPECT_FALSE(Has(plain, "id=\"burnin\""));
  EXPECT_FALSE(Has(plain, "href=\"#burnin\""));
  BurnInSummary s = SampleBurnIn();
  HtmlOptions o;
  o.burnin = &s;
  std::string html = RenderHtml(d, {}, o);
  size_t nodes = html.find("<section id=\"nodes\""), burnin = html.find("<section id=\"burnin\"");
  ASSERT_NE(nodes, std::string::npos);
  ASSERT_NE(burnin, std::string::npos);
  EXPECT_LT(nodes, burnin);
  EXPECT_LT(burnin, html.find("<section id=\"checks\""));
  EXPECT_TRUE(Has(html, "<a href=\"#burnin\">Burn-in</a>"));
}

}  // namespace
}  // namespace cc
