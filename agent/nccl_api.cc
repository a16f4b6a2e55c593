#include "agent/nccl_api.h"

#include <cstdlib>

#include "agent/facts_nccl.h"
#include "common/join.h"

namespace cc::agent {
namespace {

template <typename Fn>
void Need(const Dynlib& lib, const char* name, Fn* fn, std::vector<std::string>* missing) {
  std::string err;
  if (!lib.Bind(name, fn, &err)) missing->push_back(name);
}

template <typename Fn>
void Maybe(const Dynlib& lib, const char* name, Fn* fn) {
  std::string ignored;
  lib.Bind(name, fn, &ignored);
}

}  // namespace

std::string NcclApi::Describe(ncclResult_t r, ncclComm_t comm) const {
  std::string out = GetErrorString ? GetErrorString(r) : "ncclResult_t";
  out += " (" + std::to_string(static_cast<int>(r)) + ")";
  const char* last = GetLastError ? GetLastError(comm) : nullptr;
  if (last && *last) out += ": " + std::string(last);
  return out;
}

Result<NcclApi> LoadNcclApi(const std::vector<std::string>& dirs, DynlibSearch* search) {
  const char* llp = std::getenv("LD_LIBRARY_PATH");
  DynlibSearch local;
  DynlibSearch* s = search ? search : &local;
  // The same search the facts report, so `nccl` loads the library they named.
  Dynlib lib = Dynlib::OpenFirst(NcclCandidates(dirs, llp ? llp : ""), s);
  if (!lib.loaded()) return s->NotFound("libnccl.so.2");
  NcclApi api;
  api.path = lib.real_path();
  std::vector<std::string> missing;
  Need(lib, "ncclGetVersion", &api.GetVersion, &missing);
  Need(lib, "ncclGetUniqueId", &api.GetUniqueId, &missing);
  Need(lib, "ncclCommInitRank", &api.CommInitRank, &missing);
  Need(lib, "ncclCommAbort", &api.CommAbort, &missing);
  Need(lib, "ncclCommDestroy", &api.CommDestroy, &missing);
  Need(lib, "ncclCommGetAsyncError", &api.CommGetAsyncError, &missing);
  Need(lib, "ncclAllReduce", &api.AllReduce, &missing);
  Need(lib, "ncclGroupStart", &api.GroupStart, &missing);
  Need(lib, "ncclGroupEnd", &api.GroupEnd, &missing);
  Need(lib, "ncclGetErrorString", &api.GetErrorString, &missing);
  Maybe(lib, "ncclCommInitRankConfig", &api.CommInitRankConfig);
  Maybe(lib, "ncclCommFinalize", &api.CommFinalize);
  Maybe(lib, "ncclGetLastError", &api.GetLastError);
  if (!missing.empty()) {
    return Status::NotFound(api.path + " lacks " + Join(missing, ", ") +
                            " (NCCL older than 2.4, or not NCCL)");
  }
  if (api.GetVersion(&api.version) != ncclSuccess) api.version = 0;
  return api;
}

}  // namespace cc::agent
