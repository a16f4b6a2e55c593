#include "agent/nvml_api.h"

namespace cc::agent {

namespace {

const char* const kNvidiaLibDirs[] = {
    "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/aarch64-linux-gnu",
    "/usr/local/nvidia/lib64",  // NVIDIA container toolkit mounts
    "/usr/lib/wsl/lib",
};

// Entry points an older driver may lack: their fields go null.
void BindOptional(const Dynlib& lib, NvmlApi* api) {
  std::string ignored;
  lib.Bind("nvmlErrorString", &api->error_string, &ignored);
  lib.Bind("nvmlSystemGetNVMLVersion", &api->nvml_version, &ignored);
  lib.Bind("nvmlDeviceGetName", &api->name, &ignored);
  lib.Bind("nvmlDeviceGetUUID", &api->uuid, &ignored);
  if (!lib.Bind("nvmlDeviceGetPciInfo_v3", &api->pci_info, &ignored)) {
    lib.Bind("nvmlDeviceGetPciInfo_v2", &api->pci_info, &ignored);  // same struct
  }
  lib.Bind("nvmlDeviceGetMemoryInfo", &api->memory_info, &ignored);
  lib.Bind("nvmlDeviceGetVbiosVersion", &api->vbios_version, &ignored);
  lib.Bind("nvmlDeviceGetEccMode", &api->ecc_mode, &ignored);
  lib.Bind("nvmlDeviceGetRetiredPagesPendingStatus", &api->retired_pages_pending, &ignored);
  lib.Bind("nvmlDeviceGetRemappedRows", &api->remapped_rows, &ignored);
  lib.Bind("nvmlDeviceGetPersistenceMode", &api->persistence_mode, &ignored);
  lib.Bind("nvmlDeviceGetNvLinkState", &api->nvlink_state, &ignored);
  lib.Bind("nvmlDeviceGetNvLinkRemotePciInfo_v2", &api->nvlink_remote_pci, &ignored);
  lib.Bind("nvmlDeviceGetTopologyCommonAncestor", &api->common_ancestor, &ignored);
  lib.Bind("nvmlDeviceGetCurrPcieLinkGeneration", &api->pcie_gen, &ignored);
  lib.Bind("nvmlDeviceGetMaxPcieLinkGeneration", &api->pcie_max_gen, &ignored);
  lib.Bind("nvmlDeviceGetCurrPcieLinkWidth", &api->pcie_width, &ignored);
  lib.Bind("nvmlDeviceGetMaxPcieLinkWidth", &api->pcie_max_width, &ignored);
  lib.Bind("nvmlDeviceGetTotalEccErrors", &api->total_ecc_errors, &ignored);
  // Renamed in CUDA 12.2's NVML; drivers before it have only the old name.
  if (!lib.Bind("nvmlDeviceGetCurrentClocksEventReasons", &api->clock_event_reasons, &ignored)) {
    lib.Bind("nvmlDeviceGetCurrentClocksThrottleReasons", &api->clock_event_reasons, &ignored);
  }
  lib.Bind("nvmlDeviceGetTemperature", &api->temperature, &ignored);
  lib.Bind("nvmlDeviceGetClockInfo", &api->clock_info, &ignored);
  lib.Bind("nvmlDeviceGetMaxClockInfo", &api->max_clock_info, &ignored);
  lib.Bind("nvmlDeviceGetPowerUsage", &api->power_usage, &ignored);
  lib.Bind("nvmlDeviceGetMigMode", &api->mig_mode, &ignored);
  lib.Bind("nvmlDeviceGetNvLinkErrorCounter", &api->nvlink_error_counter, &ignored);
  lib.Bind("nvmlDeviceGetGpuFabricInfo", &api->fabric_info, &ignored);
}

}  // namespace

std::string NvmlErrorText(const NvmlApi& api, nvmlReturn_t r) {
  const char* s = api.error_string ? api.error_string(r) : nullptr;
  return (s ? std::string(s) : std::string("NVML error")) + " (" + std::to_string(r) + ")";
}

Dynlib OpenNvidiaLibrary(const std::vector<std::string>& library_paths,
                         const std::vector<std::string>& given, const std::string& file,
                         DynlibSearch* search) {
  if (!given.empty()) return Dynlib::OpenFirst(given, search);
  std::vector<std::string> dirs = library_paths;
  for (const char* d : kNvidiaLibDirs) dirs.push_back(d);
  return Dynlib::OpenFirst(LibraryCandidates(dirs, file), search);
}

bool BindNvmlApi(const Dynlib& lib, NvmlApi* api, std::string* error) {
  bool ok = lib.Bind("nvmlInit_v2", &api->init, error) &&
            lib.Bind("nvmlShutdown", &api->shutdown, error) &&
            lib.Bind("nvmlSystemGetDriverVersion", &api->driver_version, error) &&
            lib.Bind("nvmlDeviceGetCount_v2", &api->device_count, error) &&
            lib.Bind("nvmlDeviceGetHandleByIndex_v2", &api->handle_by_index, error);
  if (ok) BindOptional(lib, api);
  return ok;
}

nlohmann::json NvmlLoad::WithOrigin(nlohmann::json section) const {
  return WithLibraryOrigin(std::move(section), path, search);
}

NvmlLoad LoadNvml(const std::vector<std::string>& library_paths,
                  const std::vector<std::string>& candidates) {
  NvmlLoad out;
  Dynlib lib = OpenNvidiaLibrary(library_paths, candidates, "libnvidia-ml.so.1", &out.search);
  if (!lib.loaded()) {
    out.failure = LibraryAbsentSection("libnvidia-ml.so.1 not found", out.search);
    return out;
  }
  out.path = lib.real_path();
  std::string err;
  if (!BindNvmlApi(lib, &out.api, &err)) {
    out.failure = LibraryMissingSymbolSection(out.path, out.search, err);
  }
  return out;
}

}  // namespace cc::agent
