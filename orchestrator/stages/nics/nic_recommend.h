// The values the nics stage recommends, from its selection (nic_select.h):
// NCCL_SOCKET_IFNAME as a prefix, list or exact list that matches only the
// chosen interfaces on every node; NCCL_IB_HCA from the active IB (else
// RoCE) ports; NCCL_IB_GID_INDEX for RoCE; and the env lines to paste.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/run/network_choice.h"
#include "orchestrator/stages/nics/nic_select.h"

namespace cc {

// The shortest NCCL_SOCKET_IFNAME that selects exactly the chosen interface
// (node -> name) on every node and no other addressed interface there: the
// names' common prefix ("ens" for ens1f0 and ens2f0), else the list of
// names ("ens1f0,enp3s0"), else exact names ("=eth0" when eth0.100 exists;
// NCCL matches prefixes unless the value starts with '='). "" when empty.
std::string SocketIfname(const std::map<std::string, std::string>& nic_of,
                         const std::vector<NodeNics>& nodes);

struct IbChoice {
  std::string hca;                   // "mlx5_0:1,mlx5_1:1"; "" when none
  std::optional<int> gid_index;      // RoCE v2 index, when the ports are RoCE
  std::vector<NicProblem> problems;  // nodes lacking an active port others have
  std::vector<std::string> notes;
};

// Ports ACTIVE on at least half of the nodes that have IB/RoCE devices,
// InfiniBand ports when any node has an active one, otherwise RoCE ports
// with the most common RoCE v2 GID index.
IbChoice ChooseIbHca(const std::vector<NodeNics>& nodes);

// Why the nics stage advises btl_tcp_if_include only.
inline constexpr const char* kOobNote =
    "OMPI_MCA_oob_tcp_if_include is left to the mpi stage: it must name a network that the "
    "mpirun host shares with the nodes, and the data network may not reach it";

// "export NAME=value" lines to paste (a '#' line for a value left unset).
std::vector<std::string> EnvLines(const NicSelection& s);

// The selection as stored with the run.
nlohmann::json SelectionJson(const NicSelection& s);

// What the later stages are handed (StageContext::SetNetworkChoice).
// REQUIRES: s.subnet (a network was chosen).
NetworkChoice NetworkChoiceOf(const NicSelection& s);

}  // namespace cc
