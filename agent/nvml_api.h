// The NVML C ABI as the agent uses it, and opening libnvidia-ml.so.1 at run
// time: shared by the "gpu" facts (facts_gpu.h) and the health command
// (health_gpu.h). NVML's header is not needed: the few functions and
// structs used are declared here from NVML's stable C ABI.
#pragma once

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/dynlib.h"

namespace cc::agent {

using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
inline constexpr nvmlReturn_t kNvmlSuccess = 0;
inline constexpr nvmlReturn_t kNvmlErrorInvalidArgument = 2;
inline constexpr nvmlReturn_t kNvmlErrorNotSupported = 3;
inline constexpr nvmlReturn_t kNvmlErrorDriverNotLoaded = 9;
inline constexpr unsigned kNvmlNvLinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS
// Buffer sizes from nvml.h (NVML_DEVICE_NAME_V2_BUFFER_SIZE and friends).
inline constexpr unsigned kNvmlNameLen = 96, kNvmlUuidLen = 96, kNvmlVersionLen = 80,
                          kNvmlVbiosLen = 32;

// nvmlMemoryErrorType_t, nvmlEccCounterType_t, nvmlTemperatureSensors_t,
// nvmlNvLinkErrorCounter_t: C enums, i.e. int.
inline constexpr int kNvmlMemoryErrorUncorrected = 1;
inline constexpr int kNvmlVolatileEcc = 0;
inline constexpr int kNvmlAggregateEcc = 1;
inline constexpr int kNvmlTemperatureGpu = 0;
inline constexpr int kNvmlNvLinkErrorReplay = 0;
inline constexpr int kNvmlNvLinkErrorRecovery = 1;
inline constexpr int kNvmlNvLinkErrorCrcFlit = 2;
inline constexpr int kNvmlNvLinkErrorCrcData = 3;
// nvmlClockType_t.
inline constexpr int kNvmlClockSm = 1;
inline constexpr int kNvmlClockMem = 2;

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

// nvmlGpuFabricInfo_t (nvmlDeviceGetGpuFabricInfo): whether the GPU joined
// its NVLink fabric (NVSwitch systems with the fabric manager).
struct NvmlGpuFabricInfo {
  unsigned char clusterUuid[16];  // NVML_GPU_FABRIC_UUID_LEN
  nvmlReturn_t status;            // why registration failed, as an NVML return code
  unsigned cliqueId;
  unsigned char state;  // kNvmlFabricState*
};
static_assert(sizeof(NvmlGpuFabricInfo) == 28, "nvmlGpuFabricInfo_t is 28 bytes");
inline constexpr unsigned char kNvmlFabricStateNotSupported = 0;
inline constexpr unsigned char kNvmlFabricStateNotStarted = 1;
inline constexpr unsigned char kNvmlFabricStateInProgress = 2;
inline constexpr unsigned char kNvmlFabricStateCompleted = 3;

// The NVML entry points the agent uses; enums (nvmlEnableState_t,
// nvmlGpuTopologyLevel_t, ...) are C enums, i.e. int. Only those marked
// required are bound for sure; the others may be null (an older driver).
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
  // Health (health_gpu.h).
  nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned*) = nullptr;        // ...CurrPcieLinkGeneration
  nvmlReturn_t (*pcie_max_gen)(nvmlDevice_t, unsigned*) = nullptr;    // ...MaxPcieLinkGeneration
  nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned*) = nullptr;      // ...CurrPcieLinkWidth
  nvmlReturn_t (*pcie_max_width)(nvmlDevice_t, unsigned*) = nullptr;  // ...MaxPcieLinkWidth
  // nvmlDeviceGetTotalEccErrors(dev, error type, counter type, count).
  nvmlReturn_t (*total_ecc_errors)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  // nvmlDeviceGetCurrentClocksEventReasons, or its older name
  // nvmlDeviceGetCurrentClocksThrottleReasons (same signature).
  nvmlReturn_t (*clock_event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  // nvmlDeviceGetClockInfo / nvmlDeviceGetMaxClockInfo(dev, clock type, MHz).
  nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock_info)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned*) = nullptr;  // milliwatts
  nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned*, unsigned*) = nullptr;
  // nvmlDeviceGetNvLinkErrorCounter(dev, link, counter, value).
  nvmlReturn_t (*nvlink_error_counter)(nvmlDevice_t, unsigned, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*fabric_info)(nvmlDevice_t, NvmlGpuFabricInfo*) = nullptr;
};

// nvmlEnableState_t as the sections write it.
inline const char* NvmlEnableName(int v) { return v ? "enabled" : "disabled"; }

// "Driver Not Loaded (9)": nvmlErrorString's words and the code.
std::string NvmlErrorText(const NvmlApi& api, nvmlReturn_t r);

// Calls a string getter fn(args..., buf, len); null when the entry point is
// absent or fails.
template <typename Fn, typename... Args>
nlohmann::json NvmlStringJson(Fn fn, unsigned len, Args... args) {
  if (fn == nullptr) return nullptr;
  char buf[128];
  std::memset(buf, 0, sizeof buf);
  if (len > sizeof buf - 1) len = sizeof buf - 1;  // a terminating NUL always fits
  if (fn(args..., buf, len) != kNvmlSuccess) return nullptr;
  return std::string(buf);
}

// The first of `given` that loads; none given, `file` from library_paths,
// NVIDIA's usual folders and the loader's own search.
Dynlib OpenNvidiaLibrary(const std::vector<std::string>& library_paths,
                         const std::vector<std::string>& given, const std::string& file,
                         DynlibSearch* search);

// Binds every entry point of NvmlApi from lib. Returns false (and *error
// names the symbol) when a required one is missing; optional ones are left
// null.
bool BindNvmlApi(const Dynlib& lib, NvmlApi* api, std::string* error);

// libnvidia-ml.so.1 opened and bound, or the section that says why not.
struct NvmlLoad {
  NvmlApi api;  // usable only when failure is null
  // {"status": "absent"} when no library loaded, {"status": "error"} when it
  // lacks a required entry point; each with "reason" and "searched".
  nlohmann::json failure;
  DynlibSearch search;
  std::string path;  // the file loaded
  // `section` with "searched" (every path tried) and "path" added.
  nlohmann::json WithOrigin(nlohmann::json section) const;
};

// Opens and binds NVML: `candidates` when not empty (tests), else
// libnvidia-ml.so.1 from library_paths and NVIDIA's usual folders.
NvmlLoad LoadNvml(const std::vector<std::string>& library_paths,
                  const std::vector<std::string>& candidates);

}  // namespace cc::agent
