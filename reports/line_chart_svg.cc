#include "reports/line_chart_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "reports/escape.h"

namespace cc {
namespace {

constexpr double kCharWidth = 6.6;  // of the 11px font, roughly (heatmap_svg.cc)
constexpr double kLegendRow = 16;
constexpr const char* kNoteColour = "#d64545";  // the report's fail red

// Finite by construction: a NaN or inf would make the whole <svg> invalid,
// so it is written as 0 (callers skip such points before they get here).
std::string Fmt(double v, int decimals = 1) {
  if (!std::isfinite(v)) v = 0;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find_first_not_of("-0.") == std::string::npos) return "0";  // not "-0.0"
  return s;
}

// Enough decimals to tell ticks `step` apart.
int DecimalsFor(double step) {
  if (step <= 0 || !std::isfinite(step)) return 0;
  return std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 6);
}

struct Range {
  double lo = 0, hi = 0;
  bool any = false;
  void Add(double v) {
    if (!any) lo = hi = v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    any = true;
  }
};

// A range that ticks can cover: a single value gets room around it, so a
// flat line sits in the middle rather than on an edge of nothing.
void Widen(Range& r) {
  if (r.hi > r.lo) return;
  double pad = std::max(std::abs(r.lo) * 0.1, 1.0);
  r.lo -= pad;
  r.hi += pad;
}

bool Finite(const ChartPoint& p) { return std::isfinite(p.x) && std::isfinite(p.y); }

struct ChartLayout {
  double left = 0, top = 18, right = 0, bottom = 0;  // the plot's box
  std::vector<double> xt, yt;                        // ticks
  int x_decimals = 0, y_decimals = 0;
  double X(double x) const {
    return left + (x - xt.front()) / (xt.back() - xt.front()) * (right - left);
  }
  double Y(double y) const {
    return bottom - (y - yt.front()) / (yt.back() - yt.front()) * (bottom - top);
  }
};

// Legend entries as (text, colour, is_note), in series order.
struct LegendEntry {
  std::string text, colour;
  bool note = false;
};

std::vector<LegendEntry> LegendOf(const LineChart& c) {
  std::vector<LegendEntry> es;
  bool notes = false;
  for (size_t i = 0; i < c.series.size(); ++i) {
    const ChartSeries& s = c.series[i];
    if (s.in_legend) es.push_back({s.name, s.colour.empty() ? SeriesColour(i) : s.colour});
    for (const auto& p : s.points) notes = notes || (!p.note.empty() && Finite(p));
  }
  if (notes && !c.note_legend.empty()) es.push_back({c.note_legend, kNoteColour, true});
  return es;
}

// Entries flow left to right, wrapping at the chart's width; returns each
// entry's (x, row).
std::vector<std::pair<double, int>> FlowLegend(const std::vector<LegendEntry>& es, double x0,
                                               double width) {
  std::vector<std::pair<double, int>> at;
  double x = x0;
  int row = 0;
  for (const auto& e : es) {
    double w = 18 + e.text.size() * kCharWidth + 14;
    if (x > x0 && x + w > width) {
      x = x0;
      ++row;
    }
    at.push_back({x, row});
    x += w;
  }
  return at;
}

void WriteAxes(std::ostringstream& o, const LineChart& c, const ChartLayout& l) {
  for (double t : l.yt) {
    double y = l.Y(t);
    o << "<line x1=\"" << Fmt(l.left) << "\" x2=\"" << Fmt(l.right) << "\" y1=\"" << Fmt(y)
      << "\" y2=\"" << Fmt(y) << "\" stroke=\"#e3e6ea\"/>\n"
      << "<text x=\"" << Fmt(l.left - 6) << "\" y=\"" << Fmt(y + 4)
      << "\" text-anchor=\"end\" fill=\"#5f6b7a\">" << Fmt(t, l.y_decimals) << "</text>\n";
  }
  for (double t : l.xt) {
    double x = l.X(t);
    o << "<line x1=\"" << Fmt(x) << "\" x2=\"" << Fmt(x) << "\" y1=\"" << Fmt(l.bottom)
      << "\" y2=\"" << Fmt(l.bottom + 4) << "\" stroke=\"#5f6b7a\"/>\n"
      << "<text x=\"" << Fmt(x) << "\" y=\"" << Fmt(l.bottom + 16)
      << "\" text-anchor=\"middle\" fill=\"#5f6b7a\">" << Fmt(t, l.x_decimals) << "</text>\n";
  }
  o << "<path d=\"M" << Fmt(l.left) << " " << Fmt(l.top) << "V" << Fmt(l.bottom) << "H"
    << Fmt(l.right) << "\" fill=\"none\" stroke=\"#5f6b7a\"/>\n";
  o << "<text x=\"" << Fmt(l.left - 6) << "\" y=\"" << Fmt(l.top - 7) << "\" text-anchor=\"end\""
    << " fill=\"#5f6b7a\">" << EscapeXml(c.y_unit) << "</text>\n";
  o << "<text x=\"" << Fmt(l.right) << "\" y=\"" << Fmt(l.bottom + 32)
    << "\" text-anchor=\"end\" fill=\"#5f6b7a\">" << EscapeXml(c.x_label) << "</text>\n";
}

void WriteSeries(std::ostringstream& o, const ChartSeries& s, const std::string& colour,
                 const ChartLayout& l) {
  std::vector<const ChartPoint*> ps;
  for (const auto& p : s.points) {
    if (Finite(p)) ps.push_back(&p);
  }
  if (ps.empty()) return;
  o << "<g><title>" << EscapeXml(s.name) << "</title>\n";
  if (ps.size() > 1) {
    o << "<polyline fill=\"none\" stroke=\"" << EscapeXml(colour)
      << "\" stroke-width=\"1.6\" stroke-linejoin=\"round\" points=\"";
    for (size_t i = 0; i < ps.size(); ++i) {
      o << (i ? " " : "") << Fmt(l.X(ps[i]->x)) << "," << Fmt(l.Y(ps[i]->y));
    }
    o << "\"/>\n";
  }
  // Dots where there are few enough to tell apart, and always for a lone
  // point, which a polyline would not draw.
  if (ps.size() <= 40) {
    for (const ChartPoint* p : ps) {
      o << "<circle cx=\"" << Fmt(l.X(p->x)) << "\" cy=\"" << Fmt(l.Y(p->y)) << "\" r=\""
        << (ps.size() == 1 ? "3" : "1.8") << "\" fill=\"" << EscapeXml(colour) << "\"/>\n";
    }
  }
  o << "</g>\n";
  for (const ChartPoint* p : ps) {
    if (p->note.empty()) continue;
    o << "<circle cx=\"" << Fmt(l.X(p->x)) << "\" cy=\"" << Fmt(l.Y(p->y))
      << "\" r=\"4.5\" fill=\"none\" stroke=\"" << kNoteColour << "\" stroke-width=\"1.8\"><title>"
      << EscapeXml(p->note) << "</title></circle>\n";
  }
}

void WriteLegend(std::ostringstream& o, const std::vector<LegendEntry>& es,
                 const std::vector<std::pair<double, int>>& at, double y0) {
  for (size_t i = 0; i < es.size(); ++i) {
    double x = at[i].first, y = y0 + at[i].second * kLegendRow;
    if (es[i].note) {
      o << "<circle cx=\"" << Fmt(x + 6) << "\" cy=\"" << Fmt(y - 4) << "\" r=\"4.5\" fill=\"none\""
        << " stroke=\"" << kNoteColour << "\" stroke-width=\"1.8\"/>\n";
    } else {
      o << "<rect x=\"" << Fmt(x) << "\" y=\"" << Fmt(y - 6) << "\" width=\"12\" height=\"3\""
        << " fill=\"" << EscapeXml(es[i].colour) << "\"/>\n";
    }
    o << "<text x=\"" << Fmt(x + 18) << "\" y=\"" << Fmt(y) << "\">" << EscapeXml(es[i].text)
      << "</text>\n";
  }
}

std::string OpenSvg(const LineChart& c, double height) {
  std::ostringstream o;
  o << "<svg class=\"chart\" role=\"img\" width=\"" << Fmt(c.width, 0) << "\" height=\""
    << Fmt(height, 0) << "\" viewBox=\"0 0 " << Fmt(c.width, 0) << " " << Fmt(height, 0)
    << "\" font-family=\"ui-monospace, Menlo, Consolas, monospace\" font-size=\"11\">\n"
    << "<title>" << EscapeXml(c.title) << "</title>\n";
  return o.str();
}

}  // namespace

const char* SeriesColour(size_t i) {
  // Tableau 10, reordered so the first few are far apart; red comes late
  // since red marks notes and failures elsewhere on the page.
  static const char* const kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#17becf",
                                         "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#d62728"};
  return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
}

std::vector<double> NiceTicks(double lo, double hi, int want) {
  double rough = (hi - lo) / std::max(want - 1, 1);
  double mag = std::pow(10, std::floor(std::log10(rough)));
  double norm = rough / mag;
  double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
  double start = std::floor(lo / step + 1e-9) * step;
  std::vector<double> ts;
  for (int i = 0; i < 50; ++i) {
    double t = start + i * step;
    if (std::abs(t) < step * 1e-9) t = 0;
    ts.push_back(t);
    if (t >= hi - step * 1e-9) break;
  }
  return ts;
}

std::string RenderLineChartSvg(const LineChart& c) {
  Range xr, yr;
  for (const auto& s : c.series) {
    for (const auto& p : s.points) {
      if (!Finite(p)) continue;
      xr.Add(p.x);
      yr.Add(p.y);
    }
  }
  if (!xr.any) {
    std::string o = OpenSvg(c, 60);
    return o + "<text x=\"" + Fmt(c.width / 2) + "\" y=\"34\" text-anchor=\"middle\"" +
           " fill=\"#5f6b7a\">no data</text>\n</svg>";
  }
  if (c.y_from_zero && yr.lo > 0) yr.lo = 0;
  Widen(xr);
  Widen(yr);

  ChartLayout l;
  l.xt = NiceTicks(xr.lo, xr.hi, 6);
  l.yt = NiceTicks(yr.lo, yr.hi, 5);
  l.x_decimals = DecimalsFor(l.xt[1] - l.xt[0]);
  l.y_decimals = DecimalsFor(l.yt[1] - l.yt[0]);
  size_t widest = c.y_unit.size();
  for (double t : l.yt) widest = std::max(widest, Fmt(t, l.y_decimals).size());
  l.left = 14 + widest * kCharWidth;
  l.right = c.width - 14;
  l.bottom = c.plot_height - 38;  // tick labels and the x label below

  auto legend = LegendOf(c);
  auto at = FlowLegend(legend, l.left, c.width - 8);
  int rows = at.empty() ? 0 : at.back().second + 1;
  double height = c.plot_height + rows * kLegendRow + 4;

  std::ostringstream o;
  o << OpenSvg(c, height);
  WriteAxes(o, c, l);
  for (size_t i = 0; i < c.series.size(); ++i) {
    const ChartSeries& s = c.series[i];
    WriteSeries(o, s, s.colour.empty() ? SeriesColour(i) : s.colour, l);
  }
  WriteLegend(o, legend, at, c.plot_height + 8);
  o << "</svg>";
  return o.str();
}

}  // namespace cc
