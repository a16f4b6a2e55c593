// The CUDA driver API entry points the nccl command needs, loaded with
// dlopen("libcuda.so.1") at run time: the agent links no GPU library
// (docs/architecture.md "The agent"). Its types come from agent/gpu_abi.h.
#pragma once

#include <string>
#include <vector>

#include "agent/dynlib.h"
#include "agent/gpu_abi.h"
#include "common/status.h"

namespace cc::agent {

static_assert(sizeof(CUdeviceptr) == 8, "the _v2 memory API takes 64-bit device pointers");

// Function pointer types spelled out rather than taken from cuda.h's
// macros, so each names exactly the ABI of the symbol loaded for it.
struct CudaApi {
  CUresult (*Init)(unsigned int flags) = nullptr;
  CUresult (*DriverGetVersion)(int* version) = nullptr;
  CUresult (*DeviceGet)(CUdevice* dev, int ordinal) = nullptr;
  CUresult (*DeviceGetCount)(int* count) = nullptr;
  CUresult (*DeviceGetPCIBusId)(char* bus_id, int len, CUdevice dev) = nullptr;
  CUresult (*DevicePrimaryCtxRetain)(CUcontext* ctx, CUdevice dev) = nullptr;
  CUresult (*DevicePrimaryCtxRelease)(CUdevice dev) = nullptr;
  CUresult (*CtxSetCurrent)(CUcontext ctx) = nullptr;
  CUresult (*MemAlloc)(CUdeviceptr* ptr, size_t bytes) = nullptr;
  CUresult (*MemFree)(CUdeviceptr ptr) = nullptr;
  CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes) = nullptr;
  CUresult (*MemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes) = nullptr;
  CUresult (*MemsetD32)(CUdeviceptr dst, unsigned int value, size_t count) = nullptr;
  CUresult (*StreamCreate)(CUstream* stream, unsigned int flags) = nullptr;
  CUresult (*StreamQuery)(CUstream stream) = nullptr;
  CUresult (*StreamSynchronize)(CUstream stream) = nullptr;
  CUresult (*StreamDestroy)(CUstream stream) = nullptr;
  CUresult (*EventCreate)(CUevent* event, unsigned int flags) = nullptr;
  CUresult (*EventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*EventQuery)(CUevent event) = nullptr;
  CUresult (*EventSynchronize)(CUevent event) = nullptr;
  CUresult (*EventElapsedTime)(float* ms, CUevent start, CUevent end) = nullptr;
  CUresult (*EventDestroy)(CUevent event) = nullptr;
  CUresult (*GetErrorString)(CUresult error, const char** text) = nullptr;
  CUresult (*GetErrorName)(CUresult error, const char** text) = nullptr;

  std::string path;  // the library file loaded

  // "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)", or the
  // number when the driver cannot name it.
  std::string Describe(CUresult r) const;
};

// Loads libcuda.so.1 from `dirs` (tried first) and the usual places.
// kNotFound listing every path tried when the library is absent; kNotFound
// listing every missing symbol when the library is too old or not CUDA.
// *search (may be null) receives the attempts either way.
Result<CudaApi> LoadCudaApi(const std::vector<std::string>& dirs, DynlibSearch* search);

}  // namespace cc::agent
