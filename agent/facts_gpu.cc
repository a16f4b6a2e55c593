#include "agent/facts_gpu.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "agent/dynlib.h"

namespace cc::agent {

using nlohmann::json;

namespace {

// Buffer sizes from nvml.h (NVML_DEVICE_NAME_V2_BUFFER_SIZE and friends);
// our buffers are larger so a terminating NUL always fits.
constexpr unsigned kNameLen = 96, kUuidLen = 96, kVersionLen = 80, kVbiosLen = 32;
constexpr int kCudaErrorNoDevice = 100;

const char* const kNvidiaLibDirs[] = {
    "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/aarch64-linux-gnu",
    "/usr/local/nvidia/lib64",  // NVIDIA container toolkit mounts
    "/usr/lib/wsl/lib",
};

std::string NvmlError(const NvmlApi& api, nvmlReturn_t r) {
  const char* s = api.error_string ? api.error_string(r) : nullptr;
  return (s ? std::string(s) : std::string("NVML error")) + " (" + std::to_string(r) + ")";
}

// Calls a string getter; null when the entry point is absent or fails.
template <typename Fn, typename... Args>
json NvmlString(Fn fn, unsigned len, Args... args) {
  if (fn == nullptr) return nullptr;
  char buf[128];
  std::memset(buf, 0, sizeof buf);
  if (fn(args..., buf, len) != kNvmlSuccess) return nullptr;
  buf[sizeof buf - 1] = '\0';
  return std::string(buf);
}

const char* EnableName(int v) { return v ? "enabled" : "disabled"; }

json OneGpu(const NvmlApi& api, unsigned index, nvmlDevice_t dev, GpuLinks* links) {
  json g;
  g["index"] = index;
  g["name"] = NvmlString(api.name, kNameLen, dev);
  g["uuid"] = NvmlString(api.uuid, kUuidLen, dev);
  NvmlPciInfo pci{};
  g["pci_bus_id"] = nullptr;
  if (api.pci_info && api.pci_info(dev, &pci) == kNvmlSuccess) {
    pci.busId[sizeof pci.busId - 1] = '\0';
    links->bus_id = NormalizeBusId(pci.busId);
    g["pci_bus_id"] = links->bus_id;
  }
  NvmlMemory mem{};
  g["memory_bytes"] = api.memory_info && api.memory_info(dev, &mem) == kNvmlSuccess
                          ? json(mem.total)
                          : json(nullptr);
  g["vbios"] = NvmlString(api.vbios_version, kVbiosLen, dev);

  int cur = 0, pending = 0;
  nvmlReturn_t r = api.ecc_mode ? api.ecc_mode(dev, &cur, &pending) : kNvmlErrorNotSupported;
  g["ecc_mode"] = r == kNvmlSuccess ? EnableName(cur) : "unsupported";
  if (r == kNvmlSuccess && pending != cur) g["ecc_mode_pending"] = EnableName(pending);

  int retired = 0;
  g["retired_pages_pending"] =
      api.retired_pages_pending && api.retired_pages_pending(dev, &retired) == kNvmlSuccess
          ? json(retired != 0)
          : json(nullptr);
  unsigned corr = 0, unc = 0, rpending = 0, failed = 0;
  if (api.remapped_rows &&
      api.remapped_rows(dev, &corr, &unc, &rpending, &failed) == kNvmlSuccess) {
    g["remapped_rows_pending"] = rpending != 0;
    g["remapped_rows_failure"] = failed != 0;
    g["remapped_rows"] = {{"correctable", corr}, {"uncorrectable", unc}};
  } else {
    g["remapped_rows_pending"] = nullptr;
  }
  int persist = 0;
  g["persistence_mode"] =
      api.persistence_mode && api.persistence_mode(dev, &persist) == kNvmlSuccess
          ? json(EnableName(persist))
          : json(nullptr);

  json nvlinks = json::array();
  for (unsigned l = 0; api.nvlink_state && l < kNvmlNvLinkMaxLinks; ++l) {
    int active = 0;
    nvmlReturn_t s = api.nvlink_state(dev, l, &active);
    // INVALID_ARGUMENT: past this GPU's last link; NOT_SUPPORTED: no NVLink.
    if (s == kNvmlErrorInvalidArgument || s == kNvmlErrorNotSupported) break;
    if (s != kNvmlSuccess) continue;
    nvlinks.push_back({{"link", l}, {"active", active != 0}});
    if (!active) continue;
    NvmlPciInfo remote{};
    std::string remote_id;
    if (api.nvlink_remote_pci && api.nvlink_remote_pci(dev, l, &remote) == kNvmlSuccess) {
      remote.busId[sizeof remote.busId - 1] = '\0';
      remote_id = NormalizeBusId(remote.busId);
    }
    links->remote.push_back(remote_id);
  }
  g["nvlinks"] = nvlinks;
  return g;
}

json Absent(const std::string& reason, const DynlibSearch& search) {
  return {{"status", "absent"}, {"reason", reason}, {"searched", search.SearchedJson()}};
}

// The library loaded but lacks a required entry point (not NVIDIA's, or far
// too old).
json MissingSymbol(const Dynlib& lib, const DynlibSearch& search, const std::string& err) {
  return {{"status", "error"},
          {"reason", lib.real_path() + ": " + err},
          {"searched", search.SearchedJson()},
          {"path", lib.real_path()}};
}

// Adds where the section's library came from.
json WithOrigin(json out, const Dynlib& lib, const DynlibSearch& search) {
  out["searched"] = search.SearchedJson();
  out["path"] = lib.real_path();
  return out;
}

// The first of `given` that loads; none given, `file` from the library
// paths, NVIDIA's usual folders and the loader's own search.
Dynlib OpenNvidiaLibrary(const GpuProbeOptions& o, const std::vector<std::string>& given,
                         const std::string& file, DynlibSearch* search) {
  if (!given.empty()) return Dynlib::OpenFirst(given, search);
  std::vector<std::string> dirs = o.library_paths;
  for (const char* d : kNvidiaLibDirs) dirs.push_back(d);
  return Dynlib::OpenFirst(LibraryCandidates(dirs, file), search);
}

}  // namespace

std::string CudaVersionString(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string NormalizeBusId(const std::string& bus_id) {
  std::string s;
  for (char c : bus_id) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  // NVML writes an 8-digit domain; sysfs and nvidia-smi -q use 4 (or 8).
  size_t colon = s.find(':');
  if (colon != std::string::npos && colon > 4 && s.find_first_not_of('0') >= colon - 4) {
    s = s.substr(colon - 4);
  }
  return s;
}

std::string TopologyLevelLabel(int level) {
  switch (level) {
    case 0:  // NVML_TOPOLOGY_INTERNAL: same board
    case 10:
      return "PIX";
    case 20:
      return "PXB";
    case 30:
      return "PHB";
    case 40:
      return "NODE";
    case 50:
      return "SYS";
    default:
      return "?";
  }
}

std::vector<std::vector<std::string>> TopologyMatrix(const std::vector<std::vector<int>>& levels,
                                                     const std::vector<GpuLinks>& links) {
  const size_t n = links.size();
  std::map<std::string, size_t> by_bus;
  for (size_t i = 0; i < n; ++i) {
    if (!links[i].bus_id.empty()) by_bus[links[i].bus_id] = i;
  }
  // direct[i][j]: links from i that end at GPU j; other[i]: links that end
  // elsewhere (an NVSwitch); unknown[i]: links NVML gave no far end for.
  std::vector<std::vector<int>> direct(n, std::vector<int>(n, 0));
  std::vector<int> other(n, 0), unknown(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& r : links[i].remote) {
      auto it = r.empty() ? by_bus.end() : by_bus.find(r);
      if (r.empty()) {
        ++unknown[i];
      } else if (it != by_bus.end() && it->second != i) {
        ++direct[i][it->second];
      } else {
        ++other[i];
      }
    }
  }
  std::vector<std::vector<std::string>> m(n, std::vector<std::string>(n));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (i == j) {
        m[i][j] = "X";
        continue;
      }
      int nv = std::max(direct[i][j], direct[j][i]);
      if (nv == 0 && other[i] > 0 && other[j] > 0) nv = std::min(other[i], other[j]);
      if (nv > 0) {
        m[i][j] = "NV" + std::to_string(nv);
      } else if (unknown[i] > 0 && unknown[j] > 0) {
        m[i][j] = "NVLINK";
      } else {
        int level = i < levels.size() && j < levels[i].size() ? levels[i][j] : -1;
        m[i][j] = TopologyLevelLabel(level);
      }
    }
  }
  return m;
}

json GpuFactsFromApi(const NvmlApi& api) {
  json out;
  nvmlReturn_t r = api.init();
  if (r != kNvmlSuccess) {
    out["status"] = r == kNvmlErrorDriverNotLoaded ? "absent" : "error";
    out["reason"] = "nvmlInit_v2 failed: " + NvmlError(api, r) +
                    (r == kNvmlErrorDriverNotLoaded
                         ? "; libnvidia-ml is installed but the NVIDIA kernel driver is not loaded"
                         : "");
    return out;
  }
  out["status"] = "ok";
  out["driver_version"] = NvmlString(api.driver_version, kVersionLen);
  out["nvml_version"] = NvmlString(api.nvml_version, kVersionLen);
  unsigned count = 0;
  r = api.device_count(&count);
  if (r != kNvmlSuccess) {
    api.shutdown();
    out["status"] = "error";
    out["reason"] = "nvmlDeviceGetCount_v2 failed: " + NvmlError(api, r);
    return out;
  }
  out["count"] = count;
  count = std::min(count, 1024u);  // a corrupt answer must not exhaust memory
  json gpus = json::array();
  std::string errors;
  // Indexed by GPU index; a GPU whose handle failed keeps a null handle and
  // shows "?" in the topology.
  std::vector<nvmlDevice_t> handles(count, nullptr);
  std::vector<GpuLinks> links(count);
  for (unsigned i = 0; i < count; ++i) {
    r = api.handle_by_index(i, &handles[i]);
    if (r != kNvmlSuccess) {
      // A GPU that fell off the bus shows up here: report it, go on.
      handles[i] = nullptr;
      errors +=
          (errors.empty() ? "" : "; ") + ("GPU " + std::to_string(i) + ": " + NvmlError(api, r));
      gpus.push_back({{"index", i}, {"error", NvmlError(api, r)}});
      continue;
    }
    gpus.push_back(OneGpu(api, i, handles[i], &links[i]));
  }
  out["gpus"] = gpus;
  if (!errors.empty()) {
    out["status"] = "error";
    out["reason"] = errors;
  }
  std::vector<std::vector<int>> levels(count, std::vector<int>(count, -1));
  for (unsigned i = 0; i < count && api.common_ancestor; ++i) {
    for (unsigned j = 0; j < count; ++j) {
      int level = -1;
      if (i != j && handles[i] && handles[j] &&
          api.common_ancestor(handles[i], handles[j], &level) == kNvmlSuccess) {
        levels[i][j] = level;
      }
    }
  }
  out["topology"] = TopologyMatrix(levels, links);
  api.shutdown();
  return out;
}

json CudaFactsFromApi(const CudaApi& api) {
  json out;
  int v = 0;
  int r = api.driver_get_version(&v);
  if (r != 0) {
    return {{"status", "error"},
            {"reason", "cuDriverGetVersion failed with CUresult " + std::to_string(r)}};
  }
  out["driver_api_version"] = CudaVersionString(v);
  r = api.init(0);
  if (r == 0) {
    out["status"] = "ok";
    return out;
  }
  const char* name = nullptr;
  if (api.get_error_name) api.get_error_name(r, &name);
  std::string what = (name ? std::string(name) : "CUresult") + " (" + std::to_string(r) + ")";
  out["status"] = r == kCudaErrorNoDevice ? "absent" : "error";
  out["reason"] = "cuInit(0) failed: " + what;
  return out;
}

json CollectGpuFacts(const GpuProbeOptions& options) {
  DynlibSearch search;
  Dynlib lib = OpenNvidiaLibrary(options, options.nvml_candidates, "libnvidia-ml.so.1", &search);
  if (!lib.loaded()) return Absent("libnvidia-ml.so.1 not found", search);
  NvmlApi api;
  std::string err;
  bool ok = lib.Bind("nvmlInit_v2", &api.init, &err) &&
            lib.Bind("nvmlShutdown", &api.shutdown, &err) &&
            lib.Bind("nvmlSystemGetDriverVersion", &api.driver_version, &err) &&
            lib.Bind("nvmlDeviceGetCount_v2", &api.device_count, &err) &&
            lib.Bind("nvmlDeviceGetHandleByIndex_v2", &api.handle_by_index, &err);
  if (!ok) return MissingSymbol(lib, search, err);
  // Optional entry points: an older driver lacks some; their fields go null.
  std::string ignored;
  lib.Bind("nvmlErrorString", &api.error_string, &ignored);
  lib.Bind("nvmlSystemGetNVMLVersion", &api.nvml_version, &ignored);
  lib.Bind("nvmlDeviceGetName", &api.name, &ignored);
  lib.Bind("nvmlDeviceGetUUID", &api.uuid, &ignored);
  if (!lib.Bind("nvmlDeviceGetPciInfo_v3", &api.pci_info, &ignored)) {
    lib.Bind("nvmlDeviceGetPciInfo_v2", &api.pci_info, &ignored);  // same struct
  }
  lib.Bind("nvmlDeviceGetMemoryInfo", &api.memory_info, &ignored);
  lib.Bind("nvmlDeviceGetVbiosVersion", &api.vbios_version, &ignored);
  lib.Bind("nvmlDeviceGetEccMode", &api.ecc_mode, &ignored);
  lib.Bind("nvmlDeviceGetRetiredPagesPendingStatus", &api.retired_pages_pending, &ignored);
  lib.Bind("nvmlDeviceGetRemappedRows", &api.remapped_rows, &ignored);
  lib.Bind("nvmlDeviceGetPersistenceMode", &api.persistence_mode, &ignored);
  lib.Bind("nvmlDeviceGetNvLinkState", &api.nvlink_state, &ignored);
  lib.Bind("nvmlDeviceGetNvLinkRemotePciInfo_v2", &api.nvlink_remote_pci, &ignored);
  lib.Bind("nvmlDeviceGetTopologyCommonAncestor", &api.common_ancestor, &ignored);
  return WithOrigin(GpuFactsFromApi(api), lib, search);
}

json CollectCudaFacts(const GpuProbeOptions& options) {
  DynlibSearch search;
  Dynlib lib = OpenNvidiaLibrary(options, options.cuda_candidates, "libcuda.so.1", &search);
  if (!lib.loaded()) return Absent("libcuda.so.1 not found", search);
  CudaApi api;
  std::string err;
  if (!lib.Bind("cuInit", &api.init, &err) ||
      !lib.Bind("cuDriverGetVersion", &api.driver_get_version, &err)) {
    return MissingSymbol(lib, search, err);
  }
  std::string ignored;
  lib.Bind("cuGetErrorName", &api.get_error_name, &ignored);
  return WithOrigin(CudaFactsFromApi(api), lib, search);
}

}  // namespace cc::agent
