// An inline SVG line chart for the HTML report: named series of (x, y)
// points over shared axes with a few round-numbered ticks, axis labels, and
// a legend below. Points may carry a note (a thermal slowdown, say), drawn
// as a ring with the note as its tooltip. Like heatmap_svg.h: no script, no
// xmlns, no external reference; every name is escaped. Pure.
#pragma once

#include <string>
#include <vector>

namespace cc {

struct ChartPoint {
  double x = 0, y = 0;
  std::string note;  // non-empty: the point is marked, this is its tooltip
};

struct ChartSeries {
  std::string name;                // the legend's text and the line's tooltip
  std::vector<ChartPoint> points;  // drawn in this order; NaN or inf skipped
  // Stroke colour ("#1f77b4"); empty takes SeriesColour(index).
  std::string colour;
  // false: no legend entry of its own (a line that shares one with an
  // earlier series of its colour, e.g. the GPUs of one node).
  bool in_legend = true;
};

struct LineChart {
  std::string title;         // the <svg>'s <title>
  std::string x_label;       // "minutes since start", "round"
  std::string y_unit;        // "GB/s", "°C"; shown on the y axis
  double width = 560;        // of the whole chart, legend included
  double plot_height = 220;  // axes and plot; the legend adds rows below
  bool y_from_zero = false;  // the y axis starts at 0 (else at the data)
  std::string note_legend;   // legend text of marked points, when any
  std::vector<ChartSeries> series;
};

// "<svg ...>...</svg>". With no finite point at all, a chart saying
// "no data". A single point or all-equal values get a range around them.
std::string RenderLineChartSvg(const LineChart& chart);

// The i-th colour of a fixed palette of distinct hues (cycles).
const char* SeriesColour(size_t i);

// Ticks at 1, 2 or 5 times a power of ten covering [lo, hi], about `want`
// of them; the first at or below lo, the last at or above hi.
// REQUIRES: lo < hi, both finite, want >= 2.
std::vector<double> NiceTicks(double lo, double hi, int want);

}  // namespace cc
