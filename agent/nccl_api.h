// NCCL's entry points, loaded with dlopen("libnccl.so.2") at run time (the
// agent links no GPU library). Its types come from agent/gpu_abi.h.
#pragma once

#include <string>
#include <vector>

#include "agent/dynlib.h"
#include "agent/gpu_abi.h"
#include "common/status.h"

namespace cc::agent {

static_assert(sizeof(ncclUniqueId) == 128, "ncclUniqueId is NCCL_UNIQUE_ID_BYTES");

struct NcclApi {
  ncclResult_t (*GetVersion)(int* version) = nullptr;
  ncclResult_t (*GetUniqueId)(ncclUniqueId* id) = nullptr;
  ncclResult_t (*CommInitRank)(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) = nullptr;
  ncclResult_t (*CommAbort)(ncclComm_t comm) = nullptr;
  ncclResult_t (*CommDestroy)(ncclComm_t comm) = nullptr;
  ncclResult_t (*CommGetAsyncError)(ncclComm_t comm, ncclResult_t* error) = nullptr;
  ncclResult_t (*AllReduce)(const void* send, void* recv, size_t count, ncclDataType_t type,
                            ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) = nullptr;
  ncclResult_t (*GroupStart)() = nullptr;
  ncclResult_t (*GroupEnd)() = nullptr;
  const char* (*GetErrorString)(ncclResult_t result) = nullptr;
  // Optional: absent in older NCCL (null then).
  // 2.14+: non-blocking init, the only init a deadline can abort.
  ncclResult_t (*CommInitRankConfig)(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                     ncclConfig_t* config) = nullptr;
  ncclResult_t (*CommFinalize)(ncclComm_t comm) = nullptr;  // 2.18+
  const char* (*GetLastError)(ncclComm_t comm) = nullptr;   // 2.13+

  std::string path;  // the library file loaded
  int version = 0;   // ncclGetVersion: 22803 for 2.28.3

  // "unhandled system error (run with NCCL_DEBUG=INFO for details)" plus
  // NCCL's last error text when it has one.
  std::string Describe(ncclResult_t r, ncclComm_t comm = nullptr) const;
};

// Loads libnccl.so.2 from `dirs` (tried first), then LD_LIBRARY_PATH, the
// usual places and the loader's search (NcclCandidates, facts_nccl.h).
// kNotFound listing every path tried when absent; kNotFound listing missing
// symbols when the library lacks a required one. *search (may be null) receives
// the attempts.
Result<NcclApi> LoadNcclApi(const std::vector<std::string>& dirs, DynlibSearch* search);

}  // namespace cc::agent
