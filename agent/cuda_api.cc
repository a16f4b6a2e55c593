#include "agent/cuda_api.h"

#include "common/join.h"

namespace cc::agent {
namespace {

// Where drivers put libcuda.so.1 besides the loader's own search.
const char* const kCudaDirs[] = {
    "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/aarch64-linux-gnu",
    "/usr/local/nvidia/lib64",  // NVIDIA container toolkit
    "/usr/lib/wsl/lib",
};

// Binds the first of `names` the library has. The memory functions are
// bound by their _v2 names only: the unversioned ones take 32-bit device
// pointers and sizes.
template <typename Fn>
void BindAny(const Dynlib& lib, std::initializer_list<const char*> names, Fn* fn,
             std::vector<std::string>* missing) {
  std::string err;
  for (const char* n : names) {
    if (lib.Bind(n, fn, &err)) return;
  }
  missing->push_back(*names.begin());
}

}  // namespace

std::string CudaApi::Describe(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (GetErrorName) GetErrorName(r, &name);
  if (GetErrorString) GetErrorString(r, &text);
  std::string out = name ? name : "CUresult " + std::to_string(static_cast<int>(r));
  if (text) out += std::string(" (") + text + ")";
  return out;
}

Result<CudaApi> LoadCudaApi(const std::vector<std::string>& dirs, DynlibSearch* search) {
  std::vector<std::string> all = dirs;
  for (const char* d : kCudaDirs) all.push_back(d);
  DynlibSearch local;
  DynlibSearch* s = search ? search : &local;
  Dynlib lib = Dynlib::OpenFirst(LibraryCandidates(all, "libcuda.so.1"), s);
  if (!lib.loaded()) return s->NotFound("libcuda.so.1");
  CudaApi api;
  api.path = lib.real_path();
  std::vector<std::string> missing;
  BindAny(lib, {"cuInit"}, &api.Init, &missing);
  BindAny(lib, {"cuDriverGetVersion"}, &api.DriverGetVersion, &missing);
  BindAny(lib, {"cuDeviceGet"}, &api.DeviceGet, &missing);
  BindAny(lib, {"cuDeviceGetCount"}, &api.DeviceGetCount, &missing);
  BindAny(lib, {"cuDeviceGetPCIBusId"}, &api.DeviceGetPCIBusId, &missing);
  BindAny(lib, {"cuDevicePrimaryCtxRetain"}, &api.DevicePrimaryCtxRetain, &missing);
  BindAny(lib, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},
          &api.DevicePrimaryCtxRelease, &missing);
  BindAny(lib, {"cuCtxSetCurrent"}, &api.CtxSetCurrent, &missing);
  BindAny(lib, {"cuMemAlloc_v2"}, &api.MemAlloc, &missing);
  BindAny(lib, {"cuMemFree_v2"}, &api.MemFree, &missing);
  BindAny(lib, {"cuMemcpyHtoD_v2"}, &api.MemcpyHtoD, &missing);
  BindAny(lib, {"cuMemcpyDtoH_v2"}, &api.MemcpyDtoH, &missing);
  BindAny(lib, {"cuMemsetD32_v2"}, &api.MemsetD32, &missing);
  BindAny(lib, {"cuStreamCreate"}, &api.StreamCreate, &missing);
  BindAny(lib, {"cuStreamQuery"}, &api.StreamQuery, &missing);
  BindAny(lib, {"cuStreamSynchronize"}, &api.StreamSynchronize, &missing);
  BindAny(lib, {"cuStreamDestroy_v2", "cuStreamDestroy"}, &api.StreamDestroy, &missing);
  BindAny(lib, {"cuEventCreate"}, &api.EventCreate, &missing);
  BindAny(lib, {"cuEventRecord"}, &api.EventRecord, &missing);
  BindAny(lib, {"cuEventQuery"}, &api.EventQuery, &missing);
  BindAny(lib, {"cuEventSynchronize"}, &api.EventSynchronize, &missing);
  // _v2 (CUDA 12.8+) and the original have the same signature.
  BindAny(lib, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, &api.EventElapsedTime, &missing);
  BindAny(lib, {"cuEventDestroy_v2", "cuEventDestroy"}, &api.EventDestroy, &missing);
  BindAny(lib, {"cuGetErrorString"}, &api.GetErrorString, &missing);
  BindAny(lib, {"cuGetErrorName"}, &api.GetErrorName, &missing);
  if (!missing.empty()) {
    return Status::NotFound(api.path + " lacks " + Join(missing, ", ") +
                            " (driver too old, or not NVIDIA's libcuda)");
  }
  return api;
}

}  // namespace cc::agent
