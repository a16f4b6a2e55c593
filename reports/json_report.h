// The JSON document of a stored run, the one `clustercheck report --json`
// and `clustercheck run --json` both print: the stored run (RunDataToJson)
// with what the HTML page shows on top: the verdict line, the verdicts with
// their evidence and next steps, the node table and, where the run retested
// something, the retest counts. README.md "JSON of a run" lists the keys;
// tests/fixtures/golden/report.json is a whole example.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "orchestrator/analysis/analysis.h"
#include "orchestrator/store/run_data.h"

namespace cc {

// The document, its pair_results from data alone (the routine ones without
// message and evidence: RoutinePairs).
nlohmann::json ReportJson(const RunData& data, const std::vector<Verdict>& verdicts);

// Every pair result of the run in full, one at a time, in the order stored
// (Store::ForEachPairResult).
using PairRows = std::function<Status(const std::function<void(PairResult&&)>&)>;
PairRows PairRowsOf(Store& store, int64_t run_id);
// Writes to `out` (a FILE* the caller keeps open).
std::function<void(std::string_view)> FileWriter(std::FILE* out);

// Writes (through `write`, piece by piece) the document as
// ReportJson(...).dump(2) would, then a newline, with every pair result
// read from `rows` as it is written: a run of 256 nodes has a million of
// them, which as JSON objects take gigabytes. Returns what `rows`
// returned (the pair results are cut short then).
Status WriteReportJson(const std::function<void(std::string_view)>& write, const RunData& data,
                       const std::vector<Verdict>& verdicts, const PairRows& rows);

}  // namespace cc
