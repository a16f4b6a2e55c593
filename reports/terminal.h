// The terminal report of a stored run: the verdict line, then the
// verdicts worst first with their next steps, then one small matrix per
// pair check (alike nodes folded into ranges), then per-stage counts.
#pragma once

#include <string>

#include "orchestrator/analysis/analysis.h"
#include "orchestrator/store/run_data.h"
#include "reports/pair_matrix.h"

namespace cc {

struct TerminalOptions {
  bool color = false;        // ANSI colours (on a TTY)
  bool show_passes = false;  // draw matrices whose pairs all passed too
  std::string db_path;       // for the closing "stored in" line; "" = none
  AnalysisOptions analysis;  // thresholds and the baseline run
};

std::string RenderTerminal(const RunData& data, const TerminalOptions& options);

// The one-line verdict: "FAIL: 2 checks failed on node[3,5]" etc.
std::string VerdictLine(const RunData& data);

// One pair matrix as text, rows "a gpu[01-04]  . X", no trailing newline
// on the last line. For the terminal report and tests.
std::string RenderMatrixText(const PairMatrix& matrix, bool color);

}  // namespace cc
