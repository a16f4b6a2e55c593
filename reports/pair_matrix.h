// The matrix of one pair check (stage + check, e.g. ports tcp/29500):
// rows are senders, columns receivers. Alike nodes fold into one row and
// column labelled with a hostlist, so a 512-node cluster whose faults sit
// on two nodes shows a 3x3 matrix. Renderers (terminal, SVG) read this.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "orchestrator/store/run_data.h"

namespace cc {

struct MatrixCell {
  int tested = 0;                   // results behind this cell
  Outcome worst = Outcome::kPass;   // meaningful when tested > 0
  bool mixed = false;               // its results differ in outcome
  std::optional<double> min_value;  // lowest value among them (busbw, ...)
  std::optional<double> max_value;
  std::string state;  // the worst result's state
};

struct PairMatrix {
  std::string stage;
  std::string check;
  std::string unit;                               // "GB/s" when results carry values
  bool directed = false;                          // both directions tested separately
  bool has_values = false;                        // some results carry a value
  std::vector<std::string> labels;                // folded hostlists
  std::vector<std::vector<std::string>> members;  // nodes of each label
  std::vector<std::vector<MatrixCell>> cells;     // [row][column]
  // Results by outcome over the whole check.
  OutcomeCounts counts;
};

struct MatrixOptions {
  // Fold alike nodes; false gives one row per node.
  bool fold = true;
};

// One matrix per (stage, check) in the order first stored. Undirected
// checks (one result per pair) are mirrored so the matrix is symmetric.
// Nodes in run order. Folding groups nodes whose cells towards every other
// group are alike (partition refinement), so a group's cells are exact
// unless `mixed`.
std::vector<PairMatrix> BuildPairMatrices(const RunData& data, const MatrixOptions& options = {});

// One character per cell: '.' pass, '~' warn, 'X' fail, 'H' hang,
// '-' skip, '?' error, ' ' not tested.
char CellChar(const MatrixCell& cell);

}  // namespace cc
