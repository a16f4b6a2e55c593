// GPU-to-NIC PCIe locality, in nvidia-smi topo -m words, from the PCI paths
// under /sys/bus/pci/devices (GPU bus ids come from NVML). NCCL prefers the
// NIC closest to each GPU; a NIC across the CPU interconnect (SYS) costs
// bandwidth with GPUDirect RDMA.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/sysroot.h"

namespace cc::agent {

// The components of a device's sysfs path from its PCI root down:
// "../../../devices/pci0000:00/0000:00:02.0/0000:1a:00.0" ->
// {"pci0000:00", "0000:00:02.0", "0000:1a:00.0"}. Empty when there is no
// "pci" root component.
std::vector<std::string> PciPath(const std::string& link_text);

// "PIX" (both hang off one bridge), "PXB" (several bridges, one root),
// "PHB" (only the host bridge in common), "NODE" (other root, same NUMA
// node), "SYS" (other NUMA node, or NUMA unknown), "X" (the same device);
// "?" when a path is empty.
std::string PciLocality(const std::vector<std::string>& a, const std::vector<std::string>& b,
                        std::optional<long long> numa_a, std::optional<long long> numa_b);

// [{gpu, bus_id, nics: [{name, pci, level}]}] for every GPU with a bus id
// in the gpu section and every NIC with a PCI address (network interfaces
// of kind "physical" and IB devices), or an empty array.
nlohmann::json GpuNicLocality(const Sysroot& root, const nlohmann::json& gpu,
                              const nlohmann::json& network, const nlohmann::json& ib_devices);

}  // namespace cc::agent
