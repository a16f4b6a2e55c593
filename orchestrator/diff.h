// `clustercheck diff A B`: what regressed or recovered between two stored
// runs of a cluster. The post-maintenance question. Pure; thread-safe.
//
//   regressed   a node check or pair that did not fail in A and fails or
//               hangs in B
//   recovered   one that failed or hung in A and passes (or warns) in B
//   slower / faster   a pair value (busbw) beyond the tolerance, both runs
//               passing
//   nodes added / removed   by the runs' node lists
// A check present in only one run, or untested (skip, error) in B after a
// failure in A, is not compared.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/store/run_data.h"

namespace cc {

struct DiffOptions {
  // Relative change of a value that counts (0.10 = 10%). REQUIRES: >= 0.
  double tolerance = 0.10;
};

struct DiffEntry {
  bool pair = false;  // a pair result, else a node check
  std::string stage, check;
  std::string node;       // node checks
  std::string src, dst;   // pairs
  bool directed = false;  // the pair check tests each direction
  Outcome from = Outcome::kPass, to = Outcome::kPass;
  std::optional<double> from_value, to_value;
  std::string unit;
  std::string detail;  // what B says (message or value change)
  // "gpu02 parity/driver: fail -> pass (535.104.05 -> 550.54.15)"
  std::string ToString() const;
};

struct RunDiff {
  int64_t a = 0, b = 0;  // run ids
  std::vector<DiffEntry> regressed, recovered, slower, faster;
  std::vector<std::string> nodes_added, nodes_removed;
  bool worse() const { return !regressed.empty() || !slower.empty(); }
};

RunDiff DiffRuns(const RunData& a, const RunData& b, const DiffOptions& options = {});

// Leads with the counts:
//   "run 1 -> run 2: 1 regressed, 1 recovered, 0 slower, 0 faster,
//    0 nodes added, 0 nodes removed"
// then one section per non-empty list.
std::string RenderDiff(const RunDiff& diff);
nlohmann::json DiffToJson(const RunDiff& diff);

}  // namespace cc
