#include "reports/read_errors.h"

#include <exception>

namespace cc {

std::string VerdictWhat(const Verdict& v) {
  return "verdict " + v.kind + " (" + v.stage + (v.check.empty() ? "" : " / " + v.check) + ")";
}

std::vector<std::string> ReadErrorLines(const RunData& run, const std::string& what,
                                        const JsonProblems& problems) {
  std::vector<std::string> out;
  for (const auto& p : problems.notes()) {
    out.push_back("error: run " + std::to_string(run.run.id) + ": " + what + ": " + p);
  }
  return out;
}

std::vector<std::string> VerdictReadErrors(const RunData& run,
                                           const std::vector<Verdict>& verdicts) {
  std::vector<std::string> out;
  for (const auto& v : verdicts) {
    if (v.evidence.is_object()) continue;
    JsonProblems p;
    p.Note("evidence", "an object", v.evidence);
    for (auto& line : ReadErrorLines(run, VerdictWhat(v), p)) out.push_back(std::move(line));
  }
  return out;
}

std::vector<Verdict> AnalyzeStoredRun(const RunData& run, const AnalysisOptions& options,
                                      AnalyzeFn analyze) {
  try {
    return analyze(run, options);
  } catch (const std::exception& e) {
    // The last line of defence: readers take what they cannot read as
    // absent (common/json_read.h), so this is a reader that does not yet.
    Verdict v;
    v.kind = "analysis-error";
    v.severity = Outcome::kError;
    v.stage = "analysis";
    v.summary = "the analysis of run " + std::to_string(run.run.id) +
                " stopped on what the store holds (" + e.what() +
                "); the stages' own verdicts follow as stored";
    v.next_step = "report this with clustercheck report " + std::to_string(run.run.id) +
                  " --json, which holds the stored evidence";
    std::vector<Verdict> out = {v};
    out.insert(out.end(), run.verdicts.begin(), run.verdicts.end());
    return out;
  }
}

}  // namespace cc
