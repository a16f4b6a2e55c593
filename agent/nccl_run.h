// One NCCL AllReduce test in this process: the local GPUs' contexts,
// streams, communicators and buffers, driven step by step with a deadline
// on every step that waits for other ranks. A step that runs past its
// deadline aborts every local communicator (ncclCommAbort) and ends as a
// hang. The command (nccl_command.cc) turns steps into messages.
//
// Threading: one thread (the command's). NCCL runs its own threads inside.
#pragma once

#include <string>
#include <vector>

#include "agent/command.h"
#include "agent/cuda_api.h"
#include "agent/nccl_api.h"
#include "agent/nccl_dtype.h"
#include "agent/nccl_request.h"

namespace cc::agent {

// How a step ended. kAborted: the controller closed stdin or sent "abort".
enum class StepEnd { kDone, kFail, kHang, kAborted };

struct Step {
  StepEnd end = StepEnd::kDone;
  std::string detail;  // why, for anything but kDone
  bool ok() const { return end == StepEnd::kDone; }
};

// The step of one size: "allreduce 1048576 bytes" for float, else with
// the type: "allreduce bf16 1048576 bytes".
std::string NcclStepName(uint64_t bytes, NcclDtype dtype);

class NcclRun {
 public:
  NcclRun(const CudaApi& cuda, const NcclApi& nccl, const NcclRequest& request,
          CommandContext& ctx);
  // Frees buffers and streams and releases contexts when the GPUs are idle;
  // after a hang whose kernels did not stop, leaks them rather than block.
  ~NcclRun();
  NcclRun(const NcclRun&) = delete;
  NcclRun& operator=(const NcclRun&) = delete;

  // Contexts, streams and events for every requested GPU. kFail for a CUDA
  // error or a GPU index beyond the node's count.
  Step SetUpGpus();
  // [{"index":0,"rank":0,"pci_bus_id":"0000:3b:00.0"}, ...]
  Json GpuJson() const;

  // Every local rank joins the communicator (non-blocking init, group).
  Step InitComms(const ncclUniqueId& id);

  // Out-of-place sum AllReduce of `bytes` per rank of `dtype` elements:
  // warmup, timed iterations, exact data check (NcclPattern), then the
  // request's check_iters untimed iterations, each checked exactly
  // (nccl_checked_iters.h). *result gets the "size" message's data.
  Step RunSize(uint64_t bytes, NcclDtype dtype, Json* result);

  // ncclCommFinalize + ncclCommDestroy within the deadline; abort otherwise.
  Step Finish();
  // ncclCommAbort on every local communicator still open.
  void AbortAll();

 private:
  struct LocalRank {
    int ordinal = 0;
    int rank = 0;
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    CUstream stream = nullptr;
    CUevent start = nullptr;
    CUevent stop = nullptr;
    ncclComm_t comm = nullptr;
    CUdeviceptr send = 0;
    CUdeviceptr recv = 0;
    std::string bus_id;
  };

  Step Cuda(CUresult r, const std::string& what, const LocalRank& lr) const;
  Step Alloc(uint64_t bytes);
  void FreeBuffers();
  Step Fill(uint64_t bytes, const NcclPattern& pattern, NcclDtype dtype);
  Step ClearRecv(uint64_t bytes, NcclDtype dtype);
  Step RunCheckedIters(uint64_t bytes, const NcclPattern& pattern, NcclDtype dtype,
                       const std::string& step, Json* result);
  Step Launch(int iters, uint64_t count, NcclDtype dtype, Deadline deadline,
              const std::string& step);
  Step WaitComms(Deadline deadline, const std::string& step);
  Step WaitStreams(Deadline deadline, const std::string& step);
  Step Check(uint64_t bytes, const NcclPattern& pattern, NcclDtype dtype, size_t* mismatches,
             Json* first);
  bool StreamsIdle(Deadline deadline) const;
  // Waits about a millisecond for a control line; false when the controller
  // went away or asked to abort.
  bool Pause();
  Deadline StepDeadline() const { return Deadline::InSeconds(request_.timeout_s); }

  const CudaApi& cuda_;
  const NcclApi& nccl_;
  const NcclRequest& request_;
  CommandContext& ctx_;
  std::vector<LocalRank> ranks_;
  bool gpus_busy_ = false;  // a hang left kernels that may still run
};

}  // namespace cc::agent
