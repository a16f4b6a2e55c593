// The terminal report of a stored run: the verdict first, then what went
// wrong folded by node ranges, then per-stage counts.
#pragma once

#include <string>

#include "reports/run_data.h"

namespace cc {

struct TerminalOptions {
  bool color = false;      // ANSI colours (on a TTY)
  bool show_passes = false;  // list passing checks too
  std::string db_path;     // for the closing "stored in" line; "" = none
};

std::string RenderTerminal(const RunData& data, const TerminalOptions& options);

// The one-line verdict: "FAIL: 2 checks failed on node[3,5]" etc.
std::string VerdictLine(const RunData& data);

}  // namespace cc
