// The health stage's table in the HTML report: one row per node, the worst
// action first, with the readings behind it (GPUs, PCIe, temperature,
// ECC, remaps, Xids, IB ports and how their counters moved), and each
// distinct GPU topology matrix once, with the nodes that have it folded.
// Built from the stage's "readings" results. Pure.
#pragma once

#include <optional>

#include "orchestrator/stages/stage_spec.h"

namespace cc {

std::optional<StageReportTable> HealthReportTable(const RunData& run);

// The matrix as nvidia-smi topo -m prints it: a header row of GPU names,
// then one row per GPU.
std::string TopologyText(const nlohmann::json& matrix);

}  // namespace cc
