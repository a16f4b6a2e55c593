// The health command's "gpu" section (docs/health-readings.md): per GPU what
// says it is degraded now (PCIe link trained below its maximum, uncorrected
// ECC errors, pending row remapping, clock slowdowns and the clocks
// themselves, temperature, NVLink error counters, NVLink fabric
// registration), read through NVML, with the PCIe link cross-checked
// against sysfs under the sysroot.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "agent/facts_gpu.h"
#include "agent/sysroot.h"

namespace cc::agent {

// "not-supported", "not-started", "in-progress", "completed" for an
// nvmlGpuFabricState_t; null for any other value.
nlohmann::json FabricStateName(unsigned char state);

// {"width", "max_width", "speed", "max_speed"} from
// /sys/bus/pci/devices/<bus_id>/{current,max}_link_{width,speed}, each null
// when unreadable; null when that folder is absent under the sysroot.
nlohmann::json PcieSysfs(const Sysroot& root, const std::string& bus_id);

// The section from an already bound API (LoadNvml): {"status", "reason",
// "count", "gpus", "topology"}. Every optional entry point that is null or
// answers an error gives a null field. Shuts NVML down before returning.
nlohmann::json GpuHealthFromApi(const NvmlApi& api, const Sysroot& root);

// Loads NVML (options.library_paths, or options.nvml_candidates) and reads
// the section; {"status": "absent"} with every path searched when there is
// no libnvidia-ml. May block in the driver: the caller bounds it.
nlohmann::json CollectGpuHealth(const GpuProbeOptions& options, const Sysroot& root);

}  // namespace cc::agent
