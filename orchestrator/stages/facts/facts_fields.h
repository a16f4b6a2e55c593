// The flat fields of a node's facts (the agent's `facts` result) that parity
// judges and [expect] pins name: "driver" -> "550.54.15", "nccl_env.NCCL_IB_HCA"
// -> "mlx5". Pure functions; no I/O, thread-safe.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cc {

// Fields (see the table in facts_fields.cc for where each comes from):
//   driver cuda_driver nccl gpu_model gpu_count vbios ecc persistence
//   kernel os glibc rdma_core ofed peermem dmabuf ib_devices shm_bytes
//   memlock openmpi torch torch_cuda torch_cuda_available torch_nccl
//   nccl_env.<VAR> for each effective NCCL_* setting.
// A field whose value is unknown (section missing, skipped, failed, or the
// value null) is omitted, never "", so parity can tell "not reported"
// (UnknownFields says which omissions are failures). nccl_env.* fields are
// omitted when the login shell failed: the agent's own environment is not
// what a login job sees.
// Lists of per-GPU values (gpu_model, vbios, ecc, persistence) are the
// distinct values, sorted, joined with ", ". Never throws on odd JSON.
std::map<std::string, std::string> FlattenFacts(const nlohmann::json& facts);

// The facts sources (the agent's sections) that were asked for and could
// not be read: section -> the agent's reason ("ompi_info --parsable did not
// finish within 5 s"). A section fails when its status is "error" (it
// failed, threw or ran past its deadline); nccl_env also fails when its
// login shell did ("nccl_env (login shell)" is then not its key: the key is
// still "nccl_env"). "absent" and "skip" are answers, not failures.
std::map<std::string, std::string> FailedSources(const nlohmann::json& facts);

// The flat fields that failed sources leave unknown: field -> "<section>:
// <reason>". A field a failed section still reported (NVML's driver
// version before a later call failed) is known and not listed. Every
// nccl_env.* field is one entry, "nccl_env.*". Parity never votes these.
std::map<std::string, std::string> UnknownFields(const nlohmann::json& facts);

// The agent's warnings about NCCL settings (nccl_env.warnings), e.g.
// "NCCL_IB_DISABLE=1 (from /etc/nccl.conf) disables InfiniBand/RoCE: ...".
std::vector<std::string> FactWarnings(const nlohmann::json& facts);

}  // namespace cc
