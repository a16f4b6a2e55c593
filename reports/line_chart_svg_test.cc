#include "reports/line_chart_svg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace cc {
namespace {

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

LineChart TwoSeries() {
  LineChart c;
  c.title = "busbw";
  c.x_label = "minutes since start";
  c.y_unit = "GB/s";
  c.series.push_back({"gpu01-gpu02", {{0, 180}, {10, 182}, {20, 150}}});
  c.series.push_back({"gpu01-gpu03", {{0, 181}, {10, 179}, {20, 181}}});
  return c;
}

TEST(LineChart, DrawsOneLineAndOneLegendEntryPerSeries) {
  std::string svg = RenderLineChartSvg(TwoSeries());
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 6), "</svg>");
  EXPECT_EQ(Count(svg, "<polyline"), 2);
  EXPECT_EQ(Count(svg, ">gpu01-gpu02</text>"), 1);
  EXPECT_EQ(Count(svg, ">gpu01-gpu03</text>"), 1);
  EXPECT_NE(svg.find(">GB/s</text>"), std::string::npos);
  EXPECT_NE(svg.find(">minutes since start</text>"), std::string::npos);
  // Two series, two palette colours.
  EXPECT_NE(svg.find(SeriesColour(0)), std::string::npos);
  EXPECT_NE(svg.find(SeriesColour(1)), std::string::npos);
}

TEST(LineChart, NoSeriesOrNoPointsSaysNoData) {
  LineChart c;
  c.title = "empty";
  EXPECT_NE(RenderLineChartSvg(c).find(">no data<"), std::string::npos);
  c.series.push_back({"a", {}});
  std::string svg = RenderLineChartSvg(c);
  EXPECT_NE(svg.find(">no data<"), std::string::npos);
  EXPECT_EQ(svg.find("<polyline"), std::string::npos);
}

TEST(LineChart, ASinglePointIsADotInsideThePlot) {
  LineChart c;
  c.series.push_back({"lone", {{5, 42}}});
  std::string svg = RenderLineChartSvg(c);
  EXPECT_EQ(svg.find("<polyline"), std::string::npos);
  EXPECT_EQ(Count(svg, "<circle"), 1);
  EXPECT_EQ(svg.find("no data"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(LineChart, AFlatSeriesGetsARangeAroundItsValue) {
  LineChart c;
  c.series.push_back({"flat", {{0, 70}, {1, 70}, {2, 70}}});
  std::string svg = RenderLineChartSvg(c);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  // 70 sits between ticks below and above it, not on a collapsed axis.
  EXPECT_NE(svg.find(">70</text>"), std::string::npos);
  EXPECT_NE(svg.find(">65</text>"), std::string::npos);
  EXPECT_NE(svg.find(">75</text>"), std::string::npos);
}

TEST(LineChart, NonFinitePointsAreSkipped) {
  LineChart c;
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf = std::numeric_limits<double>::infinity();
  c.series.push_back({"holes", {{0, 1}, {1, nan}, {inf, 2}, {3, 3}}});
  std::string svg = RenderLineChartSvg(c);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  EXPECT_EQ(Count(svg, "<circle"), 2);
}

TEST(LineChart, NamesTitlesUnitsAndNotesAreEscaped) {
  LineChart c;
  c.title = "<script>alert(1)</script>";
  c.y_unit = "a&b";
  c.x_label = "\"x\"";
  c.note_legend = "thermal <slowdown>";
  c.series.push_back({"n<1>&'2'", {{0, 1, "hot & <slow>"}, {1, 2}}});
  std::string svg = RenderLineChartSvg(c);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("n&lt;1&gt;&amp;&#39;2&#39;"), std::string::npos);
  EXPECT_NE(svg.find(">a&amp;b<"), std::string::npos);
  EXPECT_NE(svg.find("&quot;x&quot;"), std::string::npos);
  EXPECT_NE(svg.find("<title>hot &amp; &lt;slow&gt;</title>"), std::string::npos);
  EXPECT_NE(svg.find(">thermal &lt;slowdown&gt;</text>"), std::string::npos);
}

TEST(LineChart, SeriesOutOfTheLegendShareTheirColoursEntry) {
  LineChart c;
  c.series.push_back({"gpu01", {{0, 1}, {1, 2}}, "#123456"});
  c.series.push_back({"gpu01 GPU 1", {{0, 2}, {1, 3}}, "#123456", false});
  std::string svg = RenderLineChartSvg(c);
  EXPECT_EQ(Count(svg, "<polyline"), 2);
  EXPECT_EQ(Count(svg, ">gpu01</text>"), 1);
  EXPECT_EQ(svg.find(">gpu01 GPU 1</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>gpu01 GPU 1</title>"), std::string::npos);  // the line's tooltip
}

TEST(LineChart, ANoteLegendAppearsOnlyWhenAPointHasANote) {
  LineChart c;
  c.note_legend = "thermal slowdown";
  c.series.push_back({"a", {{0, 1}, {1, 2}}});
  EXPECT_EQ(RenderLineChartSvg(c).find("thermal slowdown"), std::string::npos);
  c.series[0].points[1].note = "round 2: HW thermal slowdown";
  EXPECT_NE(RenderLineChartSvg(c).find(">thermal slowdown</text>"), std::string::npos);
}

TEST(LineChart, ManySeriesWrapTheLegendAndGrowTheChart) {
  LineChart few, many;
  few.series.push_back({"series 0", {{0, 1}, {1, 2}}});
  for (int i = 0; i < 30; ++i) many.series.push_back({"series " + std::to_string(i), {{0, 1}}});
  auto height = [](const std::string& svg) {
    size_t at = svg.find("height=\"") + 8;
    return std::stod(svg.substr(at, svg.find('"', at) - at));
  };
  EXPECT_GT(height(RenderLineChartSvg(many)), height(RenderLineChartSvg(few)) + 3 * 16);
}

TEST(NiceTicks, CoverTheRangeWithRoundSteps) {
  auto t = NiceTicks(0.3, 9.6, 5);
  ASSERT_GE(t.size(), 2u);
  EXPECT_LE(t.front(), 0.3);
  EXPECT_GE(t.back(), 9.6);
  EXPECT_DOUBLE_EQ(t[1] - t[0], 2.0);
  auto u = NiceTicks(151.2, 182.7, 5);
  EXPECT_DOUBLE_EQ(u.front(), 150);
  EXPECT_DOUBLE_EQ(u.back(), 190);
  EXPECT_DOUBLE_EQ(u[1] - u[0], 10);
  auto small = NiceTicks(-0.01, 0.02, 4);
  EXPECT_DOUBLE_EQ(small[1] - small[0], 0.01);
  for (double x : small) EXPECT_FALSE(std::signbit(x) && x == 0);  // no "-0"
}

}  // namespace
}  // namespace cc
