// `clustercheck report --html FILE`: one self-contained page (inline CSS
// and SVG, no script, no fetch): the verdict and counts first, the
// verdicts with next steps and evidence, a heatmap per pair check, the
// node table with key facts (odd values marked), for a burn-in its rates
// and readings over the rounds (burnin_html.h), the node checks that did
// not pass, and the run's metadata (versions, argv, inventory sha256,
// times, stages).
#pragma once

#include <string>
#include <vector>

#include "orchestrator/analysis/analysis.h"
#include "orchestrator/store/run_data.h"

namespace cc {

struct BurnInSummary;

struct HtmlOptions {
  // Matrices with at most this many nodes get one row per node; larger
  // ones fold alike nodes into ranges.
  size_t unfold_up_to = 48;
  // The run's burn-in figures (BurnInSummaryOf), shown after the node
  // table; nullptr (the default) for a run that was not a burn-in. Not
  // owned; REQUIRES: outlives the RenderHtml call.
  const BurnInSummary* burnin = nullptr;
};

std::string RenderHtml(const RunData& data, const std::vector<Verdict>& verdicts,
                       const HtmlOptions& options = {});

}  // namespace cc
