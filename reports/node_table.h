// One row per node of a run: where it is, whether it answered, the facts
// an operator reads first (driver, CUDA, NCCL, GPUs) and how its checks
// ended. For the HTML node table and the JSON report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/store/run_data.h"

namespace cc {

struct NodeRow {
  std::string node;
  std::string address;
  bool reachable = false;
  std::string error;   // why not reachable
  std::string driver;  // "" when not reported
  std::string cuda;    // CUDA driver API version
  std::string nccl;
  std::string gpus;                // "8 x NVIDIA H200", "8", ""
  Outcome worst = Outcome::kPass;  // over its node checks and its pairs
  OutcomeCounts counts;            // its node checks only
};

// One row per RunData::NodeNames(), in that order; a node without a
// stored record has only its results.
std::vector<NodeRow> BuildNodeTable(const RunData& data);

nlohmann::json NodeTableToJson(const std::vector<NodeRow>& rows);

}  // namespace cc
