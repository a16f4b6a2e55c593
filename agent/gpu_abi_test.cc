// The agent's own CUDA/NCCL declarations (agent/gpu_abi_decls.inc) must be
// ABI-identical to the real headers: a wrong size or offset here would pass
// garbage to libnccl on every GPU node. Checked wherever the CUDA toolkit's
// headers are installed (CI's image and the development machine have them).
#include <gtest/gtest.h>

#include <climits>
#include <cstddef>
#include <cstring>

#if __has_include(<cuda.h>) && __has_include(<nccl.h>)
#include <cuda.h>
#include <nccl.h>
#define CC_HAVE_REAL_GPU_HEADERS 1
#endif

#include "agent/gpu_abi.h"

// Ours, by their qualified names.
namespace ours = cc::agent::gpu_abi;

namespace cc::agent {
namespace {

#ifdef CC_HAVE_REAL_GPU_HEADERS

#define EXPECT_SAME_LAYOUT(T)                    \
  EXPECT_EQ(sizeof(ours::T), sizeof(::T)) << #T; \
  EXPECT_EQ(alignof(ours::T), alignof(::T)) << #T

#define EXPECT_SAME_OFFSET(T, field) \
  EXPECT_EQ(offsetof(ours::T, field), offsetof(::T, field)) << #T "." #field

#define EXPECT_SAME_VALUE(name) \
  EXPECT_EQ(static_cast<long long>(ours::name), static_cast<long long>(::name)) << #name

TEST(GpuAbi, CudaTypesMatchCudaH) {
  EXPECT_SAME_LAYOUT(CUresult);
  EXPECT_SAME_LAYOUT(CUdevice);
  EXPECT_SAME_LAYOUT(CUdeviceptr);
  EXPECT_SAME_LAYOUT(CUcontext);
  EXPECT_SAME_LAYOUT(CUstream);
  EXPECT_SAME_LAYOUT(CUevent);
  EXPECT_SAME_LAYOUT(cudaStream_t);
  EXPECT_SAME_VALUE(CUDA_SUCCESS);
  EXPECT_SAME_VALUE(CUDA_ERROR_STUB_LIBRARY);
  EXPECT_SAME_VALUE(CUDA_ERROR_NO_DEVICE);
  EXPECT_SAME_VALUE(CUDA_ERROR_NOT_READY);
  EXPECT_SAME_VALUE(CUDA_ERROR_UNKNOWN);
  EXPECT_SAME_VALUE(CU_STREAM_DEFAULT);
  EXPECT_SAME_VALUE(CU_EVENT_DEFAULT);
}

TEST(GpuAbi, NcclTypesAndValuesMatchNcclH) {
  EXPECT_SAME_LAYOUT(ncclComm_t);
  EXPECT_SAME_LAYOUT(ncclUniqueId);
  EXPECT_SAME_LAYOUT(ncclResult_t);
  EXPECT_SAME_LAYOUT(ncclDataType_t);
  EXPECT_SAME_LAYOUT(ncclRedOp_t);
  for (auto [o, r] : {std::pair{ours::ncclSuccess, ::ncclSuccess},
                      {ours::ncclUnhandledCudaError, ::ncclUnhandledCudaError},
                      {ours::ncclSystemError, ::ncclSystemError},
                      {ours::ncclInternalError, ::ncclInternalError},
                      {ours::ncclInvalidArgument, ::ncclInvalidArgument},
                      {ours::ncclInvalidUsage, ::ncclInvalidUsage},
                      {ours::ncclRemoteError, ::ncclRemoteError},
                      {ours::ncclInProgress, ::ncclInProgress}}) {
    EXPECT_EQ(static_cast<int>(o), static_cast<int>(r));
  }
  EXPECT_SAME_VALUE(ncclFloat);
  EXPECT_SAME_VALUE(ncclFloat32);
  EXPECT_SAME_VALUE(ncclInt32);
  EXPECT_SAME_VALUE(ncclUint64);
  EXPECT_SAME_VALUE(ncclFloat64);
  EXPECT_SAME_VALUE(ncclFloat16);
  EXPECT_SAME_VALUE(ncclBfloat16);
  EXPECT_SAME_VALUE(ncclSum);
  EXPECT_SAME_VALUE(ncclMax);
}

TEST(GpuAbi, NcclConfigHasTheLayoutOfNcclH) {
  EXPECT_SAME_LAYOUT(ncclConfig_t);
  EXPECT_SAME_OFFSET(ncclConfig_t, size);
  EXPECT_SAME_OFFSET(ncclConfig_t, magic);
  EXPECT_SAME_OFFSET(ncclConfig_t, version);
  EXPECT_SAME_OFFSET(ncclConfig_t, blocking);
  EXPECT_SAME_OFFSET(ncclConfig_t, cgaClusterSize);
  EXPECT_SAME_OFFSET(ncclConfig_t, minCTAs);
  EXPECT_SAME_OFFSET(ncclConfig_t, maxCTAs);
  EXPECT_SAME_OFFSET(ncclConfig_t, netName);
  EXPECT_SAME_OFFSET(ncclConfig_t, splitShare);
  EXPECT_SAME_OFFSET(ncclConfig_t, trafficClass);
  EXPECT_SAME_OFFSET(ncclConfig_t, commName);
  EXPECT_SAME_OFFSET(ncclConfig_t, collnetEnable);
  EXPECT_SAME_OFFSET(ncclConfig_t, CTAPolicy);
  EXPECT_SAME_OFFSET(ncclConfig_t, shrinkShare);
  EXPECT_SAME_OFFSET(ncclConfig_t, nvlsCTAs);
  EXPECT_SAME_OFFSET(ncclConfig_t, nChannelsPerNetPeer);
  EXPECT_SAME_OFFSET(ncclConfig_t, nvlinkCentricSched);
}

TEST(GpuAbi, DefaultConfigEqualsNcclConfigInitializerButForTheVersion) {
  ::ncclConfig_t real = NCCL_CONFIG_INITIALIZER;
  ours::ncclConfig_t mine = DefaultNcclConfig();
  static_assert(sizeof real == sizeof mine);
  // The header's own patch level is in real.version; ours names the layout.
  EXPECT_GE(real.version, mine.version);
  EXPECT_LT(real.version, 22900u);
  mine.version = real.version;
  EXPECT_EQ(std::memcmp(&real, &mine, sizeof real), 0);
}

#else

TEST(GpuAbi, CudaTypesMatchCudaH) {
  GTEST_SKIP() << "cuda.h / nccl.h not installed here: nothing to compare with";
}

#endif

}  // namespace
}  // namespace cc::agent
