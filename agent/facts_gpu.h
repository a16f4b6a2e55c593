// The "gpu" (NVML) and "cuda" (driver API) sections. Both libraries are
// opened with dlopen (libnvidia-ml.so.1, libcuda.so.1); a node without them
// gets status "absent" with every path searched, never a loader error.
//
// NVML's ABI and loading are in nvml_api.h (the health command shares
// them); this file also holds the walk over every GPU both use.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/nvml_api.h"

namespace cc::agent {

// CUDA driver API -------------------------------------------------------------
struct CudaApi {
  int (*init)(unsigned) = nullptr;                     // cuInit
  int (*driver_get_version)(int*) = nullptr;           // cuDriverGetVersion
  int (*get_error_name)(int, const char**) = nullptr;  // cuGetErrorName
};

// Pure parts ------------------------------------------------------------------
// 13000 -> "13.0", 12040 -> "12.4".
std::string CudaVersionString(int v);
// "00000000:18:00.0" -> "0000:18:00.0" (lowercase, 4-digit domain).
std::string NormalizeBusId(const std::string& bus_id);
// nvmlGpuTopologyLevel_t -> nvidia-smi topo -m label: 0 and 10 PIX, 20 PXB,
// 30 PHB, 40 NODE, 50 SYS; "?" for anything else.
std::string TopologyLevelLabel(int level);

// NVLinks of one GPU: its bus id and, per active link, the normalized bus id
// at the other end ("" when NVML could not say).
struct GpuLinks {
  std::string bus_id;
  std::vector<std::string> remote;
};
// The matrix nvidia-smi topo -m prints: "X" on the diagonal; "NV<n>" when n
// active links join the pair directly, or both reach an NVSwitch (n = the
// smaller of their switch link counts, as nvidia-smi counts); "NVLINK" when
// both have active links but NVML did not say where they go; otherwise the
// PCIe label of levels[i][j] (-1: unknown, "?").
std::vector<std::vector<std::string>> TopologyMatrix(const std::vector<std::vector<int>>& levels,
                                                     const std::vector<GpuLinks>& links);

// Walking the GPUs -------------------------------------------------------------
// One GPU's part of a survey: its JSON object; fills *links with its bus id
// and the far ends of its active NVLinks, for the topology.
using NvmlGpuReader =
    std::function<nlohmann::json(unsigned index, nvmlDevice_t dev, GpuLinks* links)>;

// Walks every GPU NVML sees: nvmlInit_v2, then `after_init` (may be empty:
// fields that need NVML up, e.g. the driver version), each GPU through
// read_gpu, the topology (TopologyMatrix), nvmlShutdown. Returns {"status":
// "ok"|"absent"|"error", "reason" (when not ok), "count", "gpus",
// "topology"}. A GPU whose handle cannot be had is {"index", "error"} and
// makes the status "error"; the others are still read. "absent": the
// kernel driver is not loaded.
nlohmann::json NvmlSurvey(const NvmlApi& api, const NvmlGpuReader& read_gpu,
                          const std::function<void(nlohmann::json*)>& after_init = nullptr);

// The GPU's PCI bus id, normalized (NormalizeBusId); "" when NVML cannot say.
std::string NvmlBusId(const NvmlApi& api, nvmlDevice_t dev);

// [{"link": 0, "active": true}, ...] for each NVLink of the GPU; the far
// end of each active one (normalized bus id, "" when unknown) is appended to
// links->remote. Empty when the GPU has no NVLink.
nlohmann::json NvLinkStates(const NvmlApi& api, nvmlDevice_t dev, GpuLinks* links);

// Collection ------------------------------------------------------------------
struct GpuProbeOptions {
  // Folders (or library files) searched first; from the inventory.
  std::vector<std::string> library_paths;
  // When not empty, replaces the whole search list (tests).
  std::vector<std::string> nvml_candidates;
  std::vector<std::string> cuda_candidates;
};

// The "gpu" section from an already bound API; `searched` and `path` are
// copied into it. Shuts NVML down before returning.
nlohmann::json GpuFactsFromApi(const NvmlApi& api);
// The "cuda" section from an already bound API.
nlohmann::json CudaFactsFromApi(const CudaApi& api);

nlohmann::json CollectGpuFacts(const GpuProbeOptions& options);
nlohmann::json CollectCudaFacts(const GpuProbeOptions& options);

}  // namespace cc::agent
