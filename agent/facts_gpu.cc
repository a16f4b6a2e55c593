#include "agent/facts_gpu.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

namespace cc::agent {

using nlohmann::json;

namespace {

constexpr int kCudaErrorNoDevice = 100;

json OneGpu(const NvmlApi& api, unsigned index, nvmlDevice_t dev, GpuLinks* links) {
  json g;
  g["index"] = index;
  g["name"] = NvmlStringJson(api.name, kNvmlNameLen, dev);
  g["uuid"] = NvmlStringJson(api.uuid, kNvmlUuidLen, dev);
  links->bus_id = NvmlBusId(api, dev);
  g["pci_bus_id"] = links->bus_id.empty() ? json(nullptr) : json(links->bus_id);
  NvmlMemory mem{};
  g["memory_bytes"] = api.memory_info && api.memory_info(dev, &mem) == kNvmlSuccess
                          ? json(mem.total)
                          : json(nullptr);
  g["vbios"] = NvmlStringJson(api.vbios_version, kNvmlVbiosLen, dev);

  int cur = 0, pending = 0;
  nvmlReturn_t r = api.ecc_mode ? api.ecc_mode(dev, &cur, &pending) : kNvmlErrorNotSupported;
  g["ecc_mode"] = r == kNvmlSuccess ? NvmlEnableName(cur) : "unsupported";
  if (r == kNvmlSuccess && pending != cur) g["ecc_mode_pending"] = NvmlEnableName(pending);

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
          ? json(NvmlEnableName(persist))
          : json(nullptr);
  g["nvlinks"] = NvLinkStates(api, dev, links);
  return g;
}

// The matrix from every pair's common PCIe ancestor and the NVLinks.
json Topology(const NvmlApi& api, const std::vector<nvmlDevice_t>& handles,
              const std::vector<GpuLinks>& links) {
  const size_t count = handles.size();
  std::vector<std::vector<int>> levels(count, std::vector<int>(count, -1));
  for (size_t i = 0; i < count && api.common_ancestor; ++i) {
    for (size_t j = 0; j < count; ++j) {
      int level = -1;
      if (i != j && handles[i] && handles[j] &&
          api.common_ancestor(handles[i], handles[j], &level) == kNvmlSuccess) {
        levels[i][j] = level;
      }
    }
  }
  return TopologyMatrix(levels, links);
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

std::string NvmlBusId(const NvmlApi& api, nvmlDevice_t dev) {
  NvmlPciInfo pci{};
  if (!api.pci_info || api.pci_info(dev, &pci) != kNvmlSuccess) return "";
  pci.busId[sizeof pci.busId - 1] = '\0';
  return NormalizeBusId(pci.busId);
}

json NvLinkStates(const NvmlApi& api, nvmlDevice_t dev, GpuLinks* links) {
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
  return nvlinks;
}

json NvmlSurvey(const NvmlApi& api, const NvmlGpuReader& read_gpu,
                const std::function<void(json*)>& after_init) {
  json out;
  nvmlReturn_t r = api.init();
  if (r != kNvmlSuccess) {
    out["status"] = r == kNvmlErrorDriverNotLoaded ? "absent" : "error";
    out["reason"] = "nvmlInit_v2 failed: " + NvmlErrorText(api, r) +
                    (r == kNvmlErrorDriverNotLoaded
                         ? "; libnvidia-ml is installed but the NVIDIA kernel driver is not loaded"
                         : "");
    return out;
  }
  out["status"] = "ok";
  if (after_init) after_init(&out);
  unsigned count = 0;
  r = api.device_count(&count);
  if (r != kNvmlSuccess) {
    api.shutdown();
    out["status"] = "error";
    out["reason"] = "nvmlDeviceGetCount_v2 failed: " + NvmlErrorText(api, r);
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
      errors += (errors.empty() ? "" : "; ") +
                ("GPU " + std::to_string(i) + ": " + NvmlErrorText(api, r));
      gpus.push_back({{"index", i}, {"error", NvmlErrorText(api, r)}});
      continue;
    }
    gpus.push_back(read_gpu(i, handles[i], &links[i]));
  }
  out["gpus"] = gpus;
  if (!errors.empty()) {
    out["status"] = "error";
    out["reason"] = errors;
  }
  out["topology"] = Topology(api, handles, links);
  api.shutdown();
  return out;
}

json GpuFactsFromApi(const NvmlApi& api) {
  auto versions = [&api](json* out) {
    (*out)["driver_version"] = NvmlStringJson(api.driver_version, kNvmlVersionLen);
    (*out)["nvml_version"] = NvmlStringJson(api.nvml_version, kNvmlVersionLen);
  };
  auto one = [&api](unsigned i, nvmlDevice_t dev, GpuLinks* links) {
    return OneGpu(api, i, dev, links);
  };
  return NvmlSurvey(api, one, versions);
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
  NvmlLoad nvml = LoadNvml(options.library_paths, options.nvml_candidates);
  if (!nvml.failure.is_null()) return nvml.failure;
  return nvml.WithOrigin(GpuFactsFromApi(nvml.api));
}

json CollectCudaFacts(const GpuProbeOptions& options) {
  DynlibSearch search;
  Dynlib lib =
      OpenNvidiaLibrary(options.library_paths, options.cuda_candidates, "libcuda.so.1", &search);
  if (!lib.loaded()) return LibraryAbsentSection("libcuda.so.1 not found", search);
  CudaApi api;
  std::string err;
  if (!lib.Bind("cuInit", &api.init, &err) ||
      !lib.Bind("cuDriverGetVersion", &api.driver_get_version, &err)) {
    return LibraryMissingSymbolSection(lib.real_path(), search, err);
  }
  std::string ignored;
  lib.Bind("cuGetErrorName", &api.get_error_name, &ignored);
  return WithLibraryOrigin(CudaFactsFromApi(api), lib.real_path(), search);
}

}  // namespace cc::agent
