// The network the nics stage chose, handed to the stages after it: what
// NCCL and Open MPI are told to use, and each node's address there. The
// nics stage sets it (StageContext::SetNetworkChoice) when it recommends a
// network; nccl, mpi and ports read it, and fall back to the inventory
// when there is none.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace cc {

struct NetworkChoice {
  // NCCL_SOCKET_IFNAME, NCCL_IB_HCA and NCCL_IB_GID_INDEX for every rank;
  // "" where the nics stage has no advice for that variable.
  std::map<std::string, std::string> nccl_env;
  // Open MPI's btl_tcp_if_include; "" when none.
  std::string btl_tcp_if_include;
  // Why there is no oob_tcp_if_include advice, for people reading the run.
  std::string mpi_note;
  // Node name -> its address on the chosen network. Nodes without one are
  // absent.
  std::map<std::string, std::string> address_of;

  // The node's address on the chosen network; `fallback` (its inventory
  // address) when it has none there.
  std::string AddressOr(const std::string& node, const std::string& fallback) const;
};

// The run meta entries a choice is recorded as (what reports and the
// cluster tests read): "selection.nccl_env" {NCCL_*: value},
// "selection.mpi_mca" {btl_tcp_if_include, note} and "selection.addresses"
// {node: address}.
std::map<std::string, nlohmann::json> NetworkChoiceMeta(const NetworkChoice& choice);

}  // namespace cc
