// What a report could not read of a stored run. A report renders every
// run the store holds (README.md "Where results go"), whatever another
// version or a bug stored there: a field it cannot read is an `error`
// line naming the run, what it was reading and the field, and the report
// goes on with the rest; an analysis that stops on the stored data is one
// verdict of kind `analysis-error` beside the stages' own verdicts as
// stored, so that every format shows it.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/json_read.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/store/run_data.h"

namespace cc {

// "verdict port-blocked (ports / tcp/29500)".
std::string VerdictWhat(const Verdict& v);

// "error: run 3: <what>: <problem>", one per problem.
std::vector<std::string> ReadErrorLines(const RunData& run, const std::string& what,
                                        const JsonProblems& problems);

// The lines of the verdicts whose evidence is not an object (what every
// writer stores and every reader expects).
std::vector<std::string> VerdictReadErrors(const RunData& run,
                                           const std::vector<Verdict>& verdicts);

// analyze(run, options); where it throws, the run's stored verdicts and
// an `analysis-error` verdict saying why, first. `analyze` is Analyze but
// in a test.
using AnalyzeFn = std::vector<Verdict> (*)(const RunData&, const AnalysisOptions&);
std::vector<Verdict> AnalyzeStoredRun(const RunData& run, const AnalysisOptions& options = {},
                                      AnalyzeFn analyze = Analyze);

}  // namespace cc
