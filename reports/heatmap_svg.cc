#include "reports/heatmap_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>

#include "reports/escape.h"

namespace cc {
namespace {

constexpr double kCharWidth = 6.6;  // of the 11px label font, roughly

std::string Fmt(double v, const char* f = "%.1f") {
  char buf[32];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Red (0) -> amber (0.5) -> green (1).
std::string ScaleColour(double t) {
  t = std::clamp(t, 0.0, 1.0);
  struct Rgb {
    double r, g, b;
  };
  const Rgb lo{214, 69, 69}, mid{227, 181, 5}, hi{46, 158, 91};
  const Rgb& a = t < 0.5 ? lo : mid;
  const Rgb& b = t < 0.5 ? mid : hi;
  double u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(a.r + (b.r - a.r) * u),
                static_cast<int>(a.g + (b.g - a.g) * u), static_cast<int>(a.b + (b.b - a.b) * u));
  return buf;
}

std::string CellTitle(const PairMatrix& m, size_t i, size_t j) {
  const MatrixCell& c = m.cells[i][j];
  std::string t = m.labels[i] + (m.directed ? " \xE2\x86\x92 " : " \xE2\x86\x94 ") + m.labels[j];
  if (c.tested == 0) return t + ": not tested";
  t += ": " + std::string(OutcomeName(c.worst));
  if (c.mixed) t += " (mixed, worst shown)";
  if (!c.state.empty()) t += ", " + c.state;
  if (c.min_value) {
    t += ", " + Fmt(*c.min_value);
    if (c.max_value && *c.max_value != *c.min_value) t += "-" + Fmt(*c.max_value);
    t += " " + m.unit;
  }
  if (c.tested > 1) t += " (" + std::to_string(c.tested) + " results)";
  return t;
}

}  // namespace

const char* OutcomeColour(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      return "#2e9e5b";
    case Outcome::kWarn:
      return "#e3b505";
    case Outcome::kFail:
      return "#d64545";
    case Outcome::kHang:
      return "#8e44ad";
    case Outcome::kSkip:
      return "#b8bcc2";
    case Outcome::kError:
      return "#ef8a2e";
  }
  return "#000";
}

namespace {

// Where everything goes: cells sized to the node count, labels at the left
// and (at -45 degrees) on top, the legend below.
struct HeatmapLayout {
  size_t n = 0;
  double cell = 0, left = 0, top = 0, grid = 0;
  double max_value = 0;
  bool scale = false;  // cells coloured by value, not by outcome
  double width = 0, height = 0;
};

HeatmapLayout LayoutOf(const PairMatrix& m) {
  HeatmapLayout l;
  l.n = m.labels.size();
  l.cell = l.n <= 8 ? 34 : l.n <= 16 ? 24 : l.n <= 32 ? 16 : 10;
  size_t longest = 0;
  for (const auto& label : m.labels) longest = std::max(longest, label.size());
  l.left = 12 + longest * kCharWidth;
  l.top = 12 + longest * kCharWidth * 0.72;  // labels at -45 degrees
  l.grid = l.n * l.cell;
  for (const auto& row : m.cells) {
    for (const auto& c : row) {
      if (c.max_value) l.max_value = std::max(l.max_value, *c.max_value);
    }
  }
  l.scale = m.has_values && l.max_value > 0;
  double legend_h = l.scale ? 46 : 28;
  l.width = std::max(l.left + l.grid + 16, 300.0);
  l.height = l.top + l.grid + legend_h;
  return l;
}

void WriteLabels(std::ostringstream& o, const PairMatrix& m, const HeatmapLayout& l) {
  for (size_t i = 0; i < l.n; ++i) {
    double y = l.top + i * l.cell + l.cell / 2 + 4;
    o << "<text x=\"" << Fmt(l.left - 6, "%.0f") << "\" y=\"" << Fmt(y) << "\" text-anchor=\"end\">"
      << EscapeXml(m.labels[i]) << "</text>\n";
    double x = l.left + i * l.cell + l.cell / 2;
    o << "<text transform=\"translate(" << Fmt(x) << "," << Fmt(l.top - 6)
      << ") rotate(-45)\" text-anchor=\"start\">" << EscapeXml(m.labels[i]) << "</text>\n";
  }
}

void WriteCell(std::ostringstream& o, const PairMatrix& m, const HeatmapLayout& l, size_t i,
               size_t j) {
  const MatrixCell& c = m.cells[i][j];
  const double cell = l.cell;
  double x = l.left + j * cell, y = l.top + i * cell;
  std::string fill = "#f1f2f4";
  std::string mark;
  if (c.tested > 0) {
    bool bad = !IsPassOrWarn(c.worst);
    if (l.scale && c.min_value && !bad) {
      fill = ScaleColour(*c.min_value / l.max_value);
      if (cell >= 30) mark = Fmt(*c.min_value, *c.min_value >= 100 ? "%.0f" : "%.1f");
    } else {
      fill = OutcomeColour(c.worst);
      if (c.worst != Outcome::kPass && cell >= 14) mark = std::string(1, CellChar(c));
    }
  }
  o << "<rect x=\"" << Fmt(x + 1) << "\" y=\"" << Fmt(y + 1) << "\" width=\"" << Fmt(cell - 2)
    << "\" height=\"" << Fmt(cell - 2) << "\" rx=\"3\" fill=\"" << fill << "\"><title>"
    << EscapeXml(CellTitle(m, i, j)) << "</title></rect>\n";
  if (!mark.empty()) {
    o << "<text x=\"" << Fmt(x + cell / 2) << "\" y=\"" << Fmt(y + cell / 2 + 4)
      << "\" text-anchor=\"middle\" fill=\"#fff\" font-weight=\"bold\" font-size=\""
      << (mark.size() > 1 ? 9 : 12) << "\" pointer-events=\"none\">" << EscapeXml(mark)
      << "</text>\n";
  }
}

// The value scale (red to green, 0 to the largest value), or what a row
// and a column mean.
void WriteLegend(std::ostringstream& o, const PairMatrix& m, const HeatmapLayout& l) {
  double ly = l.top + l.grid + 14;
  if (!l.scale) {
    o << "<text x=\"" << Fmt(l.left) << "\" y=\"" << Fmt(ly + 4) << "\" fill=\"#555\">"
      << (m.directed ? "row sends to column" : "symmetric: one test per pair") << "</text>\n";
    return;
  }
  std::string id = "g" + std::to_string(std::hash<std::string>{}(m.stage + m.check) % 100000);
  double lw = std::min(200.0, l.width - l.left - 16);
  o << "<defs><linearGradient id=\"" << id << "\">"
    << "<stop offset=\"0\" stop-color=\"" << ScaleColour(0) << "\"/>"
    << "<stop offset=\"0.5\" stop-color=\"" << ScaleColour(0.5) << "\"/>"
    << "<stop offset=\"1\" stop-color=\"" << ScaleColour(1) << "\"/></linearGradient></defs>\n";
  o << "<rect x=\"" << Fmt(l.left) << "\" y=\"" << Fmt(ly) << "\" width=\"" << Fmt(lw)
    << "\" height=\"10\" rx=\"2\" fill=\"url(#" << id << ")\"/>\n";
  o << "<text x=\"" << Fmt(l.left) << "\" y=\"" << Fmt(ly + 24) << "\">0</text>\n";
  o << "<text x=\"" << Fmt(l.left + lw) << "\" y=\"" << Fmt(ly + 24) << "\" text-anchor=\"end\">"
    << Fmt(l.max_value) << " " << EscapeXml(m.unit) << "</text>\n";
}

}  // namespace

std::string RenderHeatmapSvg(const PairMatrix& m) {
  const HeatmapLayout l = LayoutOf(m);
  std::ostringstream o;
  o << "<svg class=\"heatmap\" role=\"img\" width=\"" << Fmt(l.width, "%.0f") << "\" height=\""
    << Fmt(l.height, "%.0f") << "\" viewBox=\"0 0 " << Fmt(l.width, "%.0f") << " "
    << Fmt(l.height, "%.0f") << "\" font-family=\"ui-monospace, Menlo, Consolas, monospace\""
    << " font-size=\"11\">\n";
  o << "<title>" << EscapeXml(m.stage + " " + m.check) << "</title>\n";
  WriteLabels(o, m, l);
  for (size_t i = 0; i < l.n; ++i) {
    for (size_t j = 0; j < l.n; ++j) WriteCell(o, m, l, i, j);
  }
  WriteLegend(o, m, l);
  o << "</svg>";
  return o.str();
}

}  // namespace cc
