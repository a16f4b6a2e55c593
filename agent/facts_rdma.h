// IB and RoCE ports from /sys/class/infiniband, for the "rdma" section and
// the nics stage: per device its ports (state, rate, link layer), the GID
// table with each entry's type and netdev, the RoCE v2 GID index NCCL
// should use (NCCL_IB_GID_INDEX), the netdevs it maps to, and its PCI
// address and NUMA node (for GPU-to-NIC locality).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/sysroot.h"

namespace cc::agent {

// "400 Gb/sec (4X NDR)" -> 400; "2.5 Gb/sec (1X SDR)" -> 2.5; nullopt when
// the text does not start with a number of Gb/sec.
std::optional<double> ParseIbRateGbps(const std::string& rate);

// One GID table entry as sysfs shows it (ports/N/gids/I,
// gid_attrs/types/I, gid_attrs/ndevs/I).
struct GidEntry {
  int index = 0;
  std::string gid;   // "fe80:0000:...:0001"
  std::string type;  // "RoCE v2", "IB/RoCE v1", "" when unreadable
  std::string ndev;  // "ens1f0", "" when none
};

// True for the all-zero GID (an unused slot).
bool IsEmptyGid(const std::string& gid);
// True for an IPv4-mapped GID (0000:...:ffff:0a2a:0003).
bool IsIpv4MappedGid(const std::string& gid);

// The index NCCL_IB_GID_INDEX should name on a RoCE port: the first RoCE v2
// entry holding an IPv4-mapped address (what routable RoCE uses), else the
// first RoCE v2 entry that is not link-local (fe80::), else the first RoCE
// v2 entry; nullopt when the table has no RoCE v2 entry.
std::optional<int> PickRoceV2GidIndex(const std::vector<GidEntry>& gids);

// One port's link from /sys/class/infiniband/<dev>/ports/<port>, where
// device_dir is "/sys/class/infiniband/<dev>": {"port" (a number), "state",
// "phys_state", "rate", "rate_gbps", "link_layer"}, each null when
// unreadable; state and phys_state without sysfs's numeric prefix
// ("4: ACTIVE" -> "ACTIVE").
nlohmann::json IbPortLink(const Sysroot& root, const std::string& device_dir,
                          const std::string& port);

// The "ib_devices" list: [{name, pci, numa_node, netdevs, ports: [{port,
// state, phys_state, rate, rate_gbps, link_layer, gids: [{index, gid, type,
// ndev}], roce_v2_gid_index, netdevs}]}]. Empty GID slots are left out.
nlohmann::json CollectIbDevices(const Sysroot& root);

}  // namespace cc::agent
