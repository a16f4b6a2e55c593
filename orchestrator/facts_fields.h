// The flat fields of a node's facts (the agent's `facts` result) that parity
// judges and [expect] pins name: "driver" -> "550.54.15", "nccl_env.NCCL_IB_HCA"
// -> "mlx5". Pure functions; no I/O, thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cc {

// Fields (see the table in facts_fields.cc for where each comes from):
//   driver cuda_driver nccl gpu_model gpu_count vbios ecc persistence
//   kernel os glibc rdma_core ofed peermem dmabuf ib_devices shm_bytes
//   memlock openmpi torch torch_cuda torch_cuda_available torch_nccl
//   nccl_env.<VAR> for each effective NCCL_* setting.
// A field whose value is unknown (section missing, skipped, failed, or the
// value null) is omitted, never "", so parity can tell "not reported".
// Lists of per-GPU values (gpu_model, vbios, ecc, persistence) are the
// distinct values, sorted, joined with ", ". Never throws on odd JSON.
std::map<std::string, std::string> FlattenFacts(const nlohmann::json& facts);

// The agent's warnings about NCCL settings (nccl_env.warnings), e.g.
// "NCCL_IB_DISABLE=1 (from /etc/nccl.conf) disables InfiniBand/RoCE: ...".
std::vector<std::string> FactWarnings(const nlohmann::json& facts);

}  // namespace cc
