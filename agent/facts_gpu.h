// The "gpu" (NVML) and "cuda" (driver API) sections. Both libraries are
// opened with dlopen (libnvidia-ml.so.1, libcuda.so.1); a node without them
// gets status "absent" with every path searched, never a loader error.
//
// NVML's header is not needed: the few functions and structs used are
// declared here from NVML's stable C ABI.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cc::agent {

// NVML ABI ------------------------------------------------------------------
using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
inline constexpr nvmlReturn_t kNvmlSuccess = 0;
inline constexpr nvmlReturn_t kNvmlErrorInvalidArgument = 2;
inline constexpr nvmlReturn_t kNvmlErrorNotSupported = 3;
inline constexpr nvmlReturn_t kNvmlErrorDriverNotLoaded = 9;
inline constexpr unsigned kNvmlNvLinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS

// nvmlPciInfo_t (nvmlDeviceGetPciInfo_v3, nvmlDeviceGetNvLinkRemotePciInfo_v2).
struct NvmlPciInfo {
  char busIdLegacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
};
static_assert(sizeof(NvmlPciInfo) == 68, "nvmlPciInfo_t is 68 bytes");

// nvmlMemory_t (v1, for nvmlDeviceGetMemoryInfo).
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(NvmlMemory) == 24, "nvmlMemory_t is 24 bytes");

// The NVML entry points the facts use; enums (nvmlEnableState_t,
// nvmlGpuTopologyLevel_t) are C enums, i.e. int. Optional ones may be null.
struct NvmlApi {
  nvmlReturn_t (*init)() = nullptr;      // nvmlInit_v2 (required)
  nvmlReturn_t (*shutdown)() = nullptr;  // nvmlShutdown (required)
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;  // required
  nvmlReturn_t (*nvml_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*device_count)(unsigned*) = nullptr;                   // required
  nvmlReturn_t (*handle_by_index)(unsigned, nvmlDevice_t*) = nullptr;  // required
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*pci_info)(nvmlDevice_t, NvmlPciInfo*) = nullptr;
  nvmlReturn_t (*memory_info)(nvmlDevice_t, NvmlMemory*) = nullptr;
  nvmlReturn_t (*vbios_version)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*ecc_mode)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*retired_pages_pending)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*remapped_rows)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*persistence_mode)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*nvlink_remote_pci)(nvmlDevice_t, unsigned, NvmlPciInfo*) = nullptr;
  nvmlReturn_t (*common_ancestor)(nvmlDevice_t, nvmlDevice_t, int*) = nullptr;
};

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
