// Judging one node's health readings (the agent's `health` answer, see
// agent/health_command.cc) on their own, against fixed rules: a PCIe link
// below its maximum, uncorrected ECC errors, pending or failed row
// remaps, hardware slowdowns, NVLinks down, the fabric manager, the GPU
// count, and every Xid in the kernel log. What needs the rest of the
// cluster (topology, modes, IB rates) is in cluster_health.h; IB counters
// moving during the run in counter_deltas.h. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "orchestrator/stages/health/health_finding.h"

namespace cc {

// NVML clock event reason bits (nvml.h nvmlClocksEventReason*).
inline constexpr unsigned long long kClockReasonIdle = 0x1;
inline constexpr unsigned long long kClockReasonSwPowerCap = 0x4;
inline constexpr unsigned long long kClockReasonHwSlowdown = 0x8;
inline constexpr unsigned long long kClockReasonHwThermal = 0x40;
inline constexpr unsigned long long kClockReasonHwPowerBrake = 0x80;

// Findings for the "gpu" section: per GPU, and the count against
// `expected_gpus` (the inventory's `gpus`) when given. A section that is
// absent or failed is one `skip` / `error` finding "gpu" with the reason;
// a node whose GPUs are all fine gets one passing "gpu" finding.
std::vector<HealthFinding> JudgeGpus(const nlohmann::json& gpu, std::optional<int> expected_gpus);

// Findings for the "kernel_log" section: one per Xid / SXid code and
// device (count, first and last line), or one passing "kernel_log"
// finding saying how many lines were read; `skip` with the reason when
// the log could not be read.
std::vector<HealthFinding> JudgeKernelLog(const nlohmann::json& log);

// Findings for the "ib" section that need no other node: a verbs device
// missing for an active port. Port state and rate are judged against the
// cluster (cluster_health.h). `skip` "ib" when the node has no IB/RoCE.
std::vector<HealthFinding> JudgeIbPortsAlone(const nlohmann::json& ib);

}  // namespace cc
