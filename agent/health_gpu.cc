#include "agent/health_gpu.h"

namespace cc::agent {

using nlohmann::json;

namespace {

// fn(dev, args..., &value) as JSON; null when the entry point is absent or
// answers an error (NOT_SUPPORTED on a GPU without the feature).
template <typename T, typename Fn, typename... Args>
json NvmlValue(Fn fn, nvmlDevice_t dev, Args... args) {
  if (fn == nullptr) return nullptr;
  T v{};
  return fn(dev, args..., &v) == kNvmlSuccess ? json(v) : json(nullptr);
}

json Pcie(const NvmlApi& api, nvmlDevice_t dev, const Sysroot& root, const std::string& bus_id) {
  return {{"gen", NvmlValue<unsigned>(api.pcie_gen, dev)},
          {"max_gen", NvmlValue<unsigned>(api.pcie_max_gen, dev)},
          {"width", NvmlValue<unsigned>(api.pcie_width, dev)},
          {"max_width", NvmlValue<unsigned>(api.pcie_max_width, dev)},
          {"sysfs", bus_id.empty() ? json(nullptr) : PcieSysfs(root, bus_id)}};
}

json Ecc(const NvmlApi& api, nvmlDevice_t dev) {
  int cur = 0, pending = 0;
  json mode = api.ecc_mode && api.ecc_mode(dev, &cur, &pending) == kNvmlSuccess
                  ? json(NvmlEnableName(cur))
                  : json(nullptr);
  using Count = unsigned long long;
  return {
      {"mode", mode},
      {"volatile_uncorrected",
       NvmlValue<Count>(api.total_ecc_errors, dev, kNvmlMemoryErrorUncorrected, kNvmlVolatileEcc)},
      {"aggregate_uncorrected", NvmlValue<Count>(api.total_ecc_errors, dev,
                                                 kNvmlMemoryErrorUncorrected, kNvmlAggregateEcc)}};
}

json RemappedRows(const NvmlApi& api, nvmlDevice_t dev) {
  unsigned corr = 0, unc = 0, pending = 0, failure = 0;
  if (!api.remapped_rows ||
      api.remapped_rows(dev, &corr, &unc, &pending, &failure) != kNvmlSuccess) {
    return nullptr;
  }
  return {{"pending", pending != 0},
          {"failure", failure != 0},
          {"correctable", corr},
          {"uncorrectable", unc}};
}

// The SM and memory clocks now and the SM clock's maximum, MHz: under
// load, an SM clock well below sm_max is a GPU held back (power, heat).
json Clocks(const NvmlApi& api, nvmlDevice_t dev) {
  return {{"sm", NvmlValue<unsigned>(api.clock_info, dev, kNvmlClockSm)},
          {"mem", NvmlValue<unsigned>(api.clock_info, dev, kNvmlClockMem)},
          {"sm_max", NvmlValue<unsigned>(api.max_clock_info, dev, kNvmlClockSm)}};
}

// The four counters of one link; null when none of them answers (the
// entry point is absent, or the GPU keeps no such counters).
json NvLinkErrors(const NvmlApi& api, nvmlDevice_t dev, unsigned link) {
  static const std::pair<const char*, int> kCounters[] = {{"replay", kNvmlNvLinkErrorReplay},
                                                          {"recovery", kNvmlNvLinkErrorRecovery},
                                                          {"crc_flit", kNvmlNvLinkErrorCrcFlit},
                                                          {"crc_data", kNvmlNvLinkErrorCrcData}};
  json errors = json::object();
  bool any = false;
  for (const auto& [name, counter] : kCounters) {
    errors[name] = NvmlValue<unsigned long long>(api.nvlink_error_counter, dev, link, counter);
    any = any || !errors[name].is_null();
  }
  return any ? errors : json(nullptr);
}

json NvLinks(const NvmlApi& api, nvmlDevice_t dev, GpuLinks* links) {
  json nvlinks = NvLinkStates(api, dev, links);
  for (json& l : nvlinks) l["errors"] = NvLinkErrors(api, dev, l["link"].get<unsigned>());
  return nvlinks;
}

// Sets fabric_state and fabric_status. A GPU outside any NVLink fabric
// (PCIe cards, HGX boards before Hopper) answers NOT_SUPPORTED: that is the
// state "not-supported", not an unknown.
void Fabric(const NvmlApi& api, nvmlDevice_t dev, json* g) {
  (*g)["fabric_state"] = nullptr;
  (*g)["fabric_status"] = nullptr;
  if (api.fabric_info == nullptr) return;
  NvmlGpuFabricInfo info{};
  nvmlReturn_t r = api.fabric_info(dev, &info);
  if (r == kNvmlErrorNotSupported) {
    (*g)["fabric_state"] = FabricStateName(kNvmlFabricStateNotSupported);
    return;
  }
  if (r != kNvmlSuccess) return;
  (*g)["fabric_state"] = FabricStateName(info.state);
  const char* s = api.error_string ? api.error_string(info.status) : nullptr;
  (*g)["fabric_status"] = s ? json(s) : json(NvmlErrorText(api, info.status));
}

json OneGpu(const NvmlApi& api, const Sysroot& root, unsigned index, nvmlDevice_t dev,
            GpuLinks* links) {
  json g;
  g["index"] = index;
  links->bus_id = NvmlBusId(api, dev);
  g["bus_id"] = links->bus_id.empty() ? json(nullptr) : json(links->bus_id);
  g["name"] = NvmlStringJson(api.name, kNvmlNameLen, dev);
  g["uuid"] = NvmlStringJson(api.uuid, kNvmlUuidLen, dev);
  g["pcie"] = Pcie(api, dev, root, links->bus_id);
  g["ecc"] = Ecc(api, dev);
  json retired = NvmlValue<int>(api.retired_pages_pending, dev);
  g["retired_pages_pending"] = retired.is_null() ? retired : json(retired.get<int>() != 0);
  g["remapped_rows"] = RemappedRows(api, dev);
  g["clock_event_reasons"] = NvmlValue<unsigned long long>(api.clock_event_reasons, dev);
  g["temperature_c"] = NvmlValue<unsigned>(api.temperature, dev, kNvmlTemperatureGpu);
  g["clocks_mhz"] = Clocks(api, dev);
  json mw = NvmlValue<unsigned>(api.power_usage, dev);
  g["power_w"] = mw.is_null() ? mw : json(mw.get<unsigned>() / 1000.0);
  json persist = NvmlValue<int>(api.persistence_mode, dev);
  g["persistence_mode"] = persist.is_null() ? persist : json(NvmlEnableName(persist.get<int>()));
  unsigned mig = 0, mig_pending = 0;
  g["mig_mode"] = api.mig_mode && api.mig_mode(dev, &mig, &mig_pending) == kNvmlSuccess
                      ? json(NvmlEnableName(static_cast<int>(mig)))
                      : json(nullptr);
  g["nvlinks"] = NvLinks(api, dev, links);
  Fabric(api, dev, &g);
  return g;
}

}  // namespace

json FabricStateName(unsigned char state) {
  switch (state) {
    case kNvmlFabricStateNotSupported:
      return "not-supported";
    case kNvmlFabricStateNotStarted:
      return "not-started";
    case kNvmlFabricStateInProgress:
      return "in-progress";
    case kNvmlFabricStateCompleted:
      return "completed";
    default:
      return nullptr;
  }
}

json PcieSysfs(const Sysroot& root, const std::string& bus_id) {
  const std::string dir = "/sys/bus/pci/devices/" + bus_id;
  if (!root.IsDir(dir)) return nullptr;
  auto integer = [&root, &dir](const char* f) -> json {
    auto v = root.ReadInt(dir + "/" + f);
    return v ? json(*v) : json(nullptr);
  };
  // A link that is down answers reads of its speed with an error: null.
  auto text = [&root, &dir](const char* f) -> json {
    auto v = root.ReadLine(dir + "/" + f);
    return v ? json(*v) : json(nullptr);
  };
  return {{"width", integer("current_link_width")},
          {"max_width", integer("max_link_width")},
          {"speed", text("current_link_speed")},
          {"max_speed", text("max_link_speed")}};
}

json GpuHealthFromApi(const NvmlApi& api, const Sysroot& root) {
  auto one = [&api, &root](unsigned i, nvmlDevice_t dev, GpuLinks* links) {
    return OneGpu(api, root, i, dev, links);
  };
  return NvmlSurvey(api, one);
}

json CollectGpuHealth(const GpuProbeOptions& options, const Sysroot& root) {
  NvmlLoad nvml = LoadNvml(options.library_paths, options.nvml_candidates);
  if (!nvml.failure.is_null()) return nvml.failure;
  return nvml.WithOrigin(GpuHealthFromApi(nvml.api, root));
}

}  // namespace cc::agent
