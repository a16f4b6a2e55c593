// `clustercheck report --json`: the stored run (RunDataToJson) with what
// the HTML page shows on top: the verdict line, the verdicts with their
// evidence and next steps, and the node table.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "orchestrator/analysis/analysis.h"
#include "orchestrator/store/run_data.h"

namespace cc {

nlohmann::json ReportJson(const RunData& data, const std::vector<Verdict>& verdicts);

}  // namespace cc
