// An inline SVG heatmap of one pair matrix for the HTML report: senders as
// rows, receivers as columns, one square per cell coloured by outcome, or
// for a check with values (NCCL busbw) by value on a red-amber-green scale
// from 0 to the highest value, with a legend. Every cell has a <title>
// (the browser's tooltip). No xmlns and no external reference: the page
// stays self-contained.
#pragma once

#include <string>

#include "reports/pair_matrix.h"

namespace cc {

std::string RenderHeatmapSvg(const PairMatrix& matrix);

// Fill colour of an outcome ("#2e9e5b" for pass, ...), shared with the
// page's CSS so badges and cells agree.
const char* OutcomeColour(Outcome o);

}  // namespace cc
