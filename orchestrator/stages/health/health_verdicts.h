// The health stage's verdicts (its StageSpec's node_verdicts hook): one
// per finding that did not pass, nodes with the same finding folded,
// each with the action in its evidence ("action": "drain") and a next step
// that says it. A fail is kind "unhealthy", a warning "warning". The
// analysis puts verdicts whose action is reboot or drain first and lets
// them explain their nodes' pair failures (analysis.h). Pure.
#pragma once

#include <vector>

#include "orchestrator/analysis/analysis.h"
#include "orchestrator/analysis/analysis_internal.h"

namespace cc {

void HealthVerdicts(const RunData& run, const analysis::NodeOrder& order,
                    std::vector<Verdict>& out);

// "drain node4 (hold it for repair)", "reset GPU 3 on node2 (nvidia-smi -r
// -i 3) and test again", ...; `gpu` < 0 when the finding names no GPU.
std::string HealthNextStep(const std::string& action, const std::string& who, long long gpu);

// What a finding's evidence names: its "action" ("investigate" when none
// or not a string) and its "gpu" (-1 when none or not a GPU index).
std::string HealthActionOf(const nlohmann::json& evidence);
long long HealthGpuOf(const nlohmann::json& evidence);

}  // namespace cc
