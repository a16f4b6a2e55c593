#include "reports/burnin_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "common/median.h"
#include "orchestrator/burnin/burnin_text.h"
#include "reports/escape.h"
#include "reports/heatmap_svg.h"
#include "reports/line_chart_svg.h"

namespace cc {
namespace {

// NVML's clock event reasons (nvml.h, nvmlClocksEventReason*; the older
// names are nvmlClocksThrottleReason* with the same values).
constexpr uint64_t kNvmlHwSlowdown = 0x8;          // nvmlClocksEventReasonHwSlowdown
constexpr uint64_t kNvmlSwThermalSlowdown = 0x20;  // nvmlClocksEventReasonSwThermalSlowdown
constexpr uint64_t kNvmlHwThermalSlowdown = 0x40;  // nvmlClocksEventReasonHwThermalSlowdown

constexpr double kCharWidth = 6.6;  // of the 11px font (heatmap_svg.cc)
constexpr const char* kUntested = "#f1f2f4";
// Above this many pairs, the per-pair busbw chart shows the slowest only:
// more lines than that are a tangle, and the spread chart has them all.
constexpr size_t kMostPairLines = 12;

std::string E(const std::string& s) { return EscapeXml(s); }

std::string Fmt(double v, const char* f = "%.1f") {
  char buf[48];
  std::snprintf(buf, sizeof buf, f, std::isfinite(v) ? v : 0.0);
  return buf;
}

std::string PairName(const std::string& a, const std::string& b) {
  return a + " \xE2\x86\x94 " + b;
}

// The stages and checks of the summary's pairs, in their order.
std::vector<std::pair<std::string, std::string>> Checks(const BurnInSummary& s) {
  std::vector<std::pair<std::string, std::string>> cs;
  for (const auto& p : s.pairs) {
    std::pair<std::string, std::string> k{p.stage, p.check};
    if (std::find(cs.begin(), cs.end(), k) == cs.end()) cs.push_back(k);
  }
  return cs;
}

std::vector<const PairRate*> PairsOf(const BurnInSummary& s, const std::string& stage,
                                     const std::string& check) {
  std::vector<const PairRate*> ps;
  for (const auto& p : s.pairs) {
    if (p.stage == stage && p.check == check) ps.push_back(&p);
  }
  return ps;
}

// Long runs read better in hours than in hundreds of minutes.
struct TimeAxis {
  double divisor = 60;
  const char* label = "minutes since start";
};
TimeAxis TimeAxisOf(const BurnInSummary& s) {
  if (s.elapsed_s > 3 * 3600) return {3600, "hours since start"};
  return {};
}

// pass / flaky / fail as the verdicts judge rates (PairRate::outcome).
struct RateCounts {
  int pass = 0, flaky = 0, fail = 0;
};
RateCounts CountRates(const std::vector<const PairRate*>& ps) {
  RateCounts c;
  for (const PairRate* p : ps) {
    if (p->outcome == Outcome::kPass) ++c.pass;
    if (p->outcome == Outcome::kWarn) ++c.flaky;
    if (IsFailOrHang(p->outcome)) ++c.fail;
  }
  return c;
}
std::string CountsText(const RateCounts& c) {
  return std::to_string(c.pass) + " pass, " + std::to_string(c.flaky) + " flaky, " +
         std::to_string(c.fail) + " fail";
}

}  // namespace

std::string ThermalReasonsText(uint64_t r) {
  std::string s;
  auto add = [&](uint64_t bit, const char* name) {
    if (r & bit) s += (s.empty() ? "" : ", ") + std::string(name);
  };
  add(kNvmlHwThermalSlowdown, "HW thermal slowdown");
  add(kNvmlSwThermalSlowdown, "SW thermal slowdown");
  // Heat, power brake or power draw (nvml.h); named with the thermal ones
  // since it halves the clock as they do.
  add(kNvmlHwSlowdown, "HW slowdown");
  return s;
}

std::string RateColour(double rate) {
  if (!(rate > 0)) return OutcomeColour(Outcome::kPass);
  // sqrt: the first failures move the colour most; 5% is already well
  // off amber, 25% half way to red.
  double u = std::sqrt(std::min(rate, 1.0));
  const double lo[3] = {227, 181, 5}, hi[3] = {214, 69, 69};  // warn amber, fail red
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(lo[0] + (hi[0] - lo[0]) * u),
                static_cast<int>(lo[1] + (hi[1] - lo[1]) * u),
                static_cast<int>(lo[2] + (hi[2] - lo[2]) * u));
  return buf;
}

std::string RateCellTitle(const PairRate& p) {
  std::string t = PairName(p.a, p.b) + " " + p.check + ": ";
  int failed = p.failures + p.hangs;
  if (p.attempts == 0) return t + "not tested";
  if (failed == 0)
    return t + std::to_string(p.attempts) + " of " + std::to_string(p.attempts) + " passed";
  t += std::to_string(failed) + " of " + std::to_string(p.attempts) + " failed";
  if (p.hangs > 0) t += ", " + std::to_string(p.hangs) + " of them hung";
  return t + " (" + RoundsText(p.failed_rounds) + ")";
}

namespace {

// Rows and columns in s.nodes order, labels left and on top at -45
// degrees, as heatmap_svg.cc lays out a run's matrices.
struct RateGrid {
  std::vector<std::vector<const PairRate*>> cells;
  double cell = 0, left = 0, top = 0, width = 0, height = 0;
};

RateGrid GridOf(const BurnInSummary& s, const std::vector<const PairRate*>& ps) {
  RateGrid g;
  size_t n = s.nodes.size();
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < n; ++i) index.emplace(s.nodes[i], i);
  g.cells.assign(n, std::vector<const PairRate*>(n, nullptr));
  for (const PairRate* p : ps) {
    auto a = index.find(p->a), b = index.find(p->b);
    if (a == index.end() || b == index.end()) continue;
    g.cells[a->second][b->second] = p;
  }
  // An undirected pair fills its mirror too, unless that direction has a
  // rate of its own.
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (!g.cells[i][j] && g.cells[j][i]) g.cells[i][j] = g.cells[j][i];
    }
  }
  g.cell = n <= 8 ? 34 : n <= 16 ? 26 : n <= 32 ? 16 : 10;
  size_t longest = 0;
  for (const auto& node : s.nodes) longest = std::max(longest, node.size());
  g.left = 12 + longest * kCharWidth;
  g.top = 12 + longest * kCharWidth * 0.72;
  g.width = std::max(g.left + n * g.cell + 16, 320.0);
  g.height = g.top + n * g.cell + 34;
  return g;
}

void WriteRateCell(std::ostringstream& o, const RateGrid& g, size_t i, size_t j) {
  const PairRate* p = g.cells[i][j];
  double x = g.left + j * g.cell, y = g.top + i * g.cell;
  bool tested = p && p->attempts > 0;
  o << "<rect x=\"" << Fmt(x + 1) << "\" y=\"" << Fmt(y + 1) << "\" width=\"" << Fmt(g.cell - 2)
    << "\" height=\"" << Fmt(g.cell - 2) << "\" rx=\"3\" fill=\""
    << (tested ? RateColour(p->rate) : kUntested) << "\">";
  if (p) o << "<title>" << E(RateCellTitle(*p)) << "</title>";
  o << "</rect>\n";
  if (!tested || g.cell < 24) return;
  std::string pct = PercentText(p->rate);
  o << "<text x=\"" << Fmt(x + g.cell / 2) << "\" y=\"" << Fmt(y + g.cell / 2 + 3.5)
    << "\" text-anchor=\"middle\" fill=\"#fff\" font-weight=\"bold\" font-size=\""
    << (pct.size() > 3 ? 9 : 10) << "\" pointer-events=\"none\">" << E(pct) << "</text>\n";
}

// 0% green, then amber to red, and grey for untested.
void WriteRateLegend(std::ostringstream& o, const RateGrid& g, const std::string& id) {
  double y = g.height - 22, x = g.left;
  o << "<rect x=\"" << Fmt(x) << "\" y=\"" << Fmt(y) << "\" width=\"10\" height=\"10\" rx=\"2\""
    << " fill=\"" << RateColour(0) << "\"/><text x=\"" << Fmt(x + 14) << "\" y=\"" << Fmt(y + 9)
    << "\">0%</text>\n";
  x += 44;
  o << "<defs><linearGradient id=\"" << id << "\"><stop offset=\"0\" stop-color=\""
    << RateColour(1e-9) << "\"/><stop offset=\"1\" stop-color=\"" << RateColour(1)
    << "\"/></linearGradient></defs>\n<rect x=\"" << Fmt(x) << "\" y=\"" << Fmt(y)
    << "\" width=\"80\" height=\"10\" rx=\"2\" fill=\"url(#" << id << ")\"/>\n<text x=\""
    << Fmt(x + 84) << "\" y=\"" << Fmt(y + 9) << "\">100%</text>\n";
  x += 124;
  o << "<rect x=\"" << Fmt(x) << "\" y=\"" << Fmt(y) << "\" width=\"10\" height=\"10\" rx=\"2\""
    << " fill=\"" << kUntested << "\"/><text x=\"" << Fmt(x + 14) << "\" y=\"" << Fmt(y + 9)
    << "\">not tested</text>\n";
}

}  // namespace

std::string RenderRateHeatmapSvg(const BurnInSummary& s, const std::string& stage,
                                 const std::string& check) {
  RateGrid g = GridOf(s, PairsOf(s, stage, check));
  std::ostringstream o;
  o << "<svg class=\"heatmap\" role=\"img\" width=\"" << Fmt(g.width, "%.0f") << "\" height=\""
    << Fmt(g.height, "%.0f") << "\" viewBox=\"0 0 " << Fmt(g.width, "%.0f") << " "
    << Fmt(g.height, "%.0f") << "\" font-family=\"ui-monospace, Menlo, Consolas, monospace\""
    << " font-size=\"11\">\n<title>" << E(stage + " " + check + " failure rate") << "</title>\n";
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    o << "<text x=\"" << Fmt(g.left - 6) << "\" y=\"" << Fmt(g.top + i * g.cell + g.cell / 2 + 4)
      << "\" text-anchor=\"end\">" << E(s.nodes[i]) << "</text>\n<text transform=\"translate("
      << Fmt(g.left + i * g.cell + g.cell / 2) << "," << Fmt(g.top - 6)
      << ") rotate(-45)\" text-anchor=\"start\">" << E(s.nodes[i]) << "</text>\n";
  }
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    for (size_t j = 0; j < s.nodes.size(); ++j) WriteRateCell(o, g, i, j);
  }
  // Ids must be unique on the page and valid whatever the check's name.
  WriteRateLegend(o, g,
                  "rg" + std::to_string(std::hash<std::string>{}(stage + "/" + check) % 100000));
  o << "</svg>";
  return o.str();
}

namespace {

void Heading(std::ostringstream& o, const BurnInSummary& s) {
  std::vector<const PairRate*> all;
  for (const auto& p : s.pairs) all.push_back(&p);
  o << "<section id=\"burnin\"><h2>Burn-in<small>" << s.rounds_done;
  if (s.rounds_planned > 0) o << " of " << s.rounds_planned;
  o << " rounds &middot; " << E(DurationText(s.elapsed_s))
    << " &middot; pair checks: " << CountsText(CountRates(all)) << " &middot; flaky allowed up to "
    << E(PercentText(s.max_failure_rate)) << "</small></h2>\n";
}

void RateHeatmaps(std::ostringstream& o, const BurnInSummary& s) {
  auto checks = Checks(s);
  if (checks.empty()) {
    o << "<div class=\"ok\">No pair checks in this burn-in.</div></section>\n";
    return;
  }
  o << "<div class=\"matrices\">\n";
  for (const auto& [stage, check] : checks) {
    o << "<figure><figcaption>" << E(stage + " " + check) << " failure rate<small>"
      << CountsText(CountRates(PairsOf(s, stage, check)))
      << " &middot; hover a cell for its rounds</small></figcaption>\n"
      << RenderRateHeatmapSvg(s, stage, check) << "\n</figure>\n";
  }
  o << "</div>\n</section>\n";
}

// One line per pair over time, the slowest kMostPairLines when there are
// more (by median: a pair slow throughout, not one bad round).
LineChart PairValuesChart(const std::vector<const PairRate*>& ps, const TimeAxis& t) {
  std::vector<std::pair<double, const PairRate*>> by_median;
  for (const PairRate* p : ps) {
    if (p->values.empty()) continue;
    std::vector<double> v;
    for (const auto& pt : p->values) v.push_back(pt.value);
    by_median.push_back({p->value_median.value_or(Median(v)), p});
  }
  std::stable_sort(by_median.begin(), by_median.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  if (by_median.size() > kMostPairLines) by_median.resize(kMostPairLines);
  LineChart c;
  c.x_label = t.label;
  for (const auto& [median, p] : by_median) {
    ChartSeries line{PairName(p->a, p->b), {}};
    for (const auto& pt : p->values) line.points.push_back({pt.elapsed_s / t.divisor, pt.value});
    c.series.push_back(std::move(line));
  }
  return c;
}

// min, median and max across the pairs measured in each round.
LineChart SpreadChart(const std::vector<const PairRate*>& ps) {
  std::map<int, std::vector<double>> by_round;
  for (const PairRate* p : ps) {
    for (const auto& pt : p->values) by_round[pt.round].push_back(pt.value);
  }
  LineChart c;
  c.x_label = "round";
  c.series = {{"max", {}, "#2ca02c"}, {"median", {}, "#1f77b4"}, {"min", {}, "#ff7f0e"}};
  for (auto& [round, v] : by_round) {
    double x = round;
    c.series[0].points.push_back({x, *std::max_element(v.begin(), v.end())});
    c.series[1].points.push_back({x, Median(v)});
    c.series[2].points.push_back({x, *std::min_element(v.begin(), v.end())});
  }
  return c;
}

void Values(std::ostringstream& o, const BurnInSummary& s) {
  TimeAxis t = TimeAxisOf(s);
  bool any = false;
  for (const auto& [stage, check] : Checks(s)) {
    auto ps = PairsOf(s, stage, check);
    bool has = std::any_of(ps.begin(), ps.end(), [](const PairRate* p) {
      return !p->unit.empty() && !p->values.empty();
    });
    if (!has) continue;
    if (!any) o << "<section id=\"burnin-values\"><h2>Burn-in bandwidth</h2>\n";
    any = true;
    std::string unit = ps.front()->unit;
    for (const PairRate* p : ps) unit = unit.empty() ? p->unit : unit;
    LineChart pairs = PairValuesChart(ps, t), spread = SpreadChart(ps);
    pairs.title = stage + " " + check + " per pair";
    spread.title = stage + " " + check + " spread per round";
    pairs.y_unit = spread.y_unit = unit;
    size_t with_values =
        std::count_if(ps.begin(), ps.end(), [](const PairRate* p) { return !p->values.empty(); });
    o << "<div class=\"matrices\">\n<figure><figcaption>" << E(stage + " " + check)
      << " per pair<small>"
      << (with_values > kMostPairLines ? "the " + std::to_string(kMostPairLines) + " slowest of " +
                                             std::to_string(with_values) + " pairs by median"
                                       : std::to_string(with_values) + " pairs")
      << "</small></figcaption>\n"
      << RenderLineChartSvg(pairs) << "\n</figure>\n<figure><figcaption>" << E(stage + " " + check)
      << " across the cluster<small>min, median and max of the pairs of each round</small>"
      << "</figcaption>\n"
      << RenderLineChartSvg(spread) << "\n</figure>\n</div>\n";
  }
  if (any) o << "</section>\n";
}

bool Moved(const CounterSeries& c) {
  return std::any_of(c.points.begin(), c.points.end(), [&](const CounterSeries::Point& p) {
    return p.value != c.points.front().value;
  });
}

std::string PerHourText(double v) {
  return (v >= 0 ? "+" : "") + Fmt(v, std::abs(v) >= 10 ? "%.0f" : "%.2g") + " per hour";
}

void Counters(std::ostringstream& o, const BurnInSummary& s) {
  std::vector<const CounterSeries*> moved;
  for (const auto& c : s.counters) {
    if (Moved(c)) moved.push_back(&c);
  }
  o << "<section id=\"burnin-counters\"><h2>Counters that moved<small>" << moved.size() << " of "
    << s.counters.size() << "</small></h2>\n";
  if (moved.empty()) {
    o << "<div class=\"ok\">No counter moved over " << s.rounds_done
      << " rounds.</div></section>\n";
    return;
  }
  TimeAxis t = TimeAxisOf(s);
  o << "<div class=\"matrices\">\n";
  for (const CounterSeries* c : moved) {
    LineChart chart;
    chart.title = c->node + " " + c->counter;
    chart.x_label = t.label;
    chart.width = 400;
    chart.plot_height = 170;
    ChartSeries line{c->node + " " + c->counter, {}, "", false};
    for (const auto& p : c->points) line.points.push_back({p.elapsed_s / t.divisor, p.value});
    chart.series.push_back(std::move(line));
    o << "<figure><figcaption>" << E(c->node + " " + c->counter) << "<small>"
      << E(PerHourText(c->delta_per_hour)) << " &middot; " << Fmt(c->points.front().value, "%.0f")
      << " &rarr; " << Fmt(c->points.back().value, "%.0f") << "</small></figcaption>\n"
      << RenderLineChartSvg(chart) << "\n</figure>\n";
  }
  o << "</div>\n</section>\n";
}

// The GPUs' readings as one line per node and GPU, coloured per node (a
// node's GPUs run alike; the odd node is what to see), one legend entry
// per node.
LineChart GpuChart(const BurnInSummary& s, const TimeAxis& t,
                   std::optional<double> GpuSample::*field) {
  LineChart c;
  c.x_label = t.label;
  c.width = 600;
  c.plot_height = 260;
  c.note_legend = "thermal slowdown (hover)";
  for (size_t n = 0; n < s.gpus.size(); ++n) {
    const auto& node = s.gpus[n];
    std::string colour = SeriesColour(n);
    c.series.push_back({node.node, {}, colour});  // the legend entry
    std::map<int, ChartSeries> by_gpu;
    for (const auto& g : node.samples) {
      if (!(g.*field)) continue;
      ChartSeries& line = by_gpu[g.gpu];
      line.name = node.node + " GPU " + std::to_string(g.gpu);
      line.colour = colour;
      line.in_legend = false;
      std::string why = ThermalReasonsText(g.clock_event_reasons);
      if (!why.empty()) why = line.name + ", round " + std::to_string(g.round) + ": " + why;
      line.points.push_back({g.elapsed_s / t.divisor, *(g.*field), why});
    }
    for (auto& [gpu, line] : by_gpu) c.series.push_back(std::move(line));
  }
  return c;
}

// Per node and GPU, the rounds with a thermal slowdown: the table says at
// once what the markers on the charts say on hover.
void SlowdownTable(std::ostringstream& o, const BurnInSummary& s) {
  struct Row {
    std::vector<int> rounds;
    uint64_t reasons = 0;
    std::optional<double> hottest, slowest;
  };
  std::vector<std::pair<std::string, Row>> rows;
  for (const auto& node : s.gpus) {
    std::map<int, Row> by_gpu;
    for (const auto& g : node.samples) {
      if (ThermalReasonsText(g.clock_event_reasons).empty()) continue;
      Row& r = by_gpu[g.gpu];
      r.rounds.push_back(g.round);
      r.reasons |= g.clock_event_reasons;
      if (g.temperature_c) r.hottest = std::max(r.hottest.value_or(-1e9), *g.temperature_c);
      if (g.sm_clock_mhz) r.slowest = std::min(r.slowest.value_or(1e12), *g.sm_clock_mhz);
    }
    for (auto& [gpu, r] : by_gpu) rows.push_back({node.node + " GPU " + std::to_string(gpu), r});
  }
  if (rows.empty()) {
    o << "<div class=\"ok\">No thermal slowdown in any sample.</div>\n";
    return;
  }
  o << "<table><tr><th>GPU</th><th>slowed down in</th><th>why (NVML)</th><th>hottest</th>"
       "<th>lowest SM clock</th></tr>\n";
  for (const auto& [name, r] : rows) {
    o << "<tr class=\"w-warn\"><td class=\"mono\"><b>" << E(name) << "</b></td><td class=\"mono\">"
      << E(RoundsText(r.rounds)) << "</td><td>" << E(ThermalReasonsText(r.reasons))
      << "</td><td class=\"mono\">"
      << (r.hottest ? Fmt(*r.hottest, "%.0f") +
                          " \xC2\xB0"
                          "C"
                    : "")
      << "</td><td class=\"mono\">" << (r.slowest ? Fmt(*r.slowest, "%.0f") + " MHz" : "")
      << "</td></tr>\n";
  }
  o << "</table>\n";
}

void Gpus(std::ostringstream& o, const BurnInSummary& s) {
  size_t samples = 0;
  for (const auto& n : s.gpus) samples += n.samples.size();
  if (samples == 0) return;
  TimeAxis t = TimeAxisOf(s);
  LineChart temp = GpuChart(s, t, &GpuSample::temperature_c);
  LineChart clock = GpuChart(s, t, &GpuSample::sm_clock_mhz);
  temp.title = "GPU temperature";
  temp.y_unit =
      "\xC2\xB0"
      "C";
  clock.title = "SM clock";
  clock.y_unit = "MHz";
  o << "<section id=\"burnin-gpus\"><h2>GPUs over time<small>" << s.gpus.size() << " nodes, "
    << samples << " samples &middot; one line per GPU, one colour per node</small></h2>\n"
    << "<div class=\"matrices\">\n<figure><figcaption>Temperature</figcaption>\n"
    << RenderLineChartSvg(temp) << "\n</figure>\n<figure><figcaption>SM clock</figcaption>\n"
    << RenderLineChartSvg(clock) << "\n</figure>\n</div>\n";
  SlowdownTable(o, s);
  o << "</section>\n";
}

}  // namespace

std::string RenderBurnInSection(const BurnInSummary& s) {
  std::ostringstream o;
  Heading(o, s);
  RateHeatmaps(o, s);
  Values(o, s);
  Counters(o, s);
  Gpus(o, s);
  return o.str();
}

}  // namespace cc
