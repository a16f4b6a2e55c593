// The JSON document of a stored run, the one `clustercheck report --json`
// and `clustercheck run --json` both print: the stored run (RunDataToJson)
// with what the HTML page shows on top: the verdict line, the verdicts with
// their evidence and next steps, the node table and, where the run retested
// something, the retest counts. README.md "JSON of a run" lists the keys;
// tests/fixtures/golden/report.json is a whole example.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "orchestrator/analysis/analysis.h"
#include "orchestrator/store/run_data.h"

namespace cc {

nlohmann::json ReportJson(const RunData& data, const std::vector<Verdict>& verdicts);

}  // namespace cc
