#include "agent/nccl_run.h"

#include <algorithm>
#include <thread>

#include "agent/facts_nccl.h"
#include "agent/nccl_checked_iters.h"
#include "common/bandwidth.h"

namespace cc::agent {
namespace {

// Host staging for fill and check, so a 16 GiB buffer needs 64 MiB of RAM.
constexpr uint64_t kChunkBytes = uint64_t{64} << 20;
// Received buffers start as NaN: a collective that writes nothing fails
// the data check instead of passing on stale data.
constexpr unsigned int kNanBits = 0x7fc00000u;
constexpr unsigned int kNan16x2Bits = 0x7fc07fc0u;
// How long a clean-up waits for aborted kernels before leaking instead.
constexpr Millis kIdleWait{5000};

std::string Bytes(uint64_t b) { return std::to_string(b) + " bytes"; }

}  // namespace

std::string NcclStepName(uint64_t bytes, NcclDtype dtype) {
  std::string type = dtype == NcclDtype::kFloat ? "" : std::string(NcclDtypeName(dtype)) + " ";
  return "allreduce " + type + Bytes(bytes);
}

NcclRun::NcclRun(const CudaApi& cuda, const NcclApi& nccl, const NcclRequest& request,
                 CommandContext& ctx)
    : cuda_(cuda), nccl_(nccl), request_(request), ctx_(ctx) {}

NcclRun::~NcclRun() {
  AbortAll();  // no-op after Finish()
  if (gpus_busy_) {
    // cuMemFree and a context's destruction wait for running kernels; the
    // agent must not hang in clean-up, so it leaks instead.
    ctx_.Log("warn", "GPU work still running after abort: buffers and contexts leaked");
    return;
  }
  FreeBuffers();
  for (auto& lr : ranks_) {
    if (lr.ctx == nullptr) continue;
    cuda_.CtxSetCurrent(lr.ctx);
    if (lr.start) cuda_.EventDestroy(lr.start);
    if (lr.stop) cuda_.EventDestroy(lr.stop);
    if (lr.stream) cuda_.StreamDestroy(lr.stream);
    cuda_.DevicePrimaryCtxRelease(lr.dev);
  }
  cuda_.CtxSetCurrent(nullptr);
}

Step NcclRun::Cuda(CUresult r, const std::string& what, const LocalRank& lr) const {
  if (r == CUDA_SUCCESS) return {};
  return {StepEnd::kFail,
          what + " on GPU " + std::to_string(lr.ordinal) + ": " + cuda_.Describe(r)};
}

Step NcclRun::SetUpGpus() {
  int count = 0;
  CUresult r = cuda_.DeviceGetCount(&count);
  if (r != CUDA_SUCCESS) return {StepEnd::kFail, "cuDeviceGetCount: " + cuda_.Describe(r)};
  for (size_t i = 0; i < request_.gpus.size(); ++i) {
    LocalRank lr;
    lr.ordinal = request_.gpus[i];
    lr.rank = request_.rank_base + static_cast<int>(i);
    if (lr.ordinal >= count) {
      return {StepEnd::kFail, "GPU " + std::to_string(lr.ordinal) + " requested but the node has " +
                                  std::to_string(count) + " GPU(s)"};
    }
    if (Step s = Cuda(cuda_.DeviceGet(&lr.dev, lr.ordinal), "cuDeviceGet", lr); !s.ok()) return s;
    Step s = Cuda(cuda_.DevicePrimaryCtxRetain(&lr.ctx, lr.dev), "cuDevicePrimaryCtxRetain", lr);
    if (!s.ok()) return s;
    ranks_.push_back(lr);  // from here the destructor releases it
    LocalRank& in = ranks_.back();
    if (s = Cuda(cuda_.CtxSetCurrent(in.ctx), "cuCtxSetCurrent", in); !s.ok()) return s;
    // A blocking stream: it waits for the fills and memsets that run on the
    // legacy default stream before the collectives.
    if (s = Cuda(cuda_.StreamCreate(&in.stream, CU_STREAM_DEFAULT), "cuStreamCreate", in);
        !s.ok()) {
      return s;
    }
    if (s = Cuda(cuda_.EventCreate(&in.start, CU_EVENT_DEFAULT), "cuEventCreate", in); !s.ok()) {
      return s;
    }
    if (s = Cuda(cuda_.EventCreate(&in.stop, CU_EVENT_DEFAULT), "cuEventCreate", in); !s.ok()) {
      return s;
    }
    char bus[64] = {0};
    if (cuda_.DeviceGetPCIBusId(bus, sizeof bus - 1, in.dev) == CUDA_SUCCESS) in.bus_id = bus;
  }
  return {};
}

Json NcclRun::GpuJson() const {
  Json out = Json::array();
  for (const auto& lr : ranks_) {
    out.push_back({{"index", lr.ordinal}, {"rank", lr.rank}, {"pci_bus_id", lr.bus_id}});
  }
  return out;
}

Step NcclRun::InitComms(const ncclUniqueId& id) {
  if (nccl_.CommInitRankConfig == nullptr) {
    // A blocking ncclCommInitRank cannot be stopped at a deadline.
    return {StepEnd::kFail, "NCCL " + NcclVersionString(nccl_.version) +
                                " lacks ncclCommInitRankConfig (2.14+): init could not be "
                                "bounded by a deadline"};
  }
  // Safe with any NCCL >= 2.14: it copies min(config.size, its own sizeof)
  // and ignores fields it does not know (src/init.cc, parseCommConfig).
  ncclConfig_t config = DefaultNcclConfig();
  config.blocking = 0;
  std::string failed;
  nccl_.GroupStart();
  for (auto& lr : ranks_) {
    cuda_.CtxSetCurrent(lr.ctx);  // NCCL takes the device from the current context
    ncclResult_t r = nccl_.CommInitRankConfig(&lr.comm, request_.nranks, id, lr.rank, &config);
    if (r != ncclSuccess && r != ncclInProgress && failed.empty()) {
      failed = "ncclCommInitRankConfig rank " + std::to_string(lr.rank) + ": " +
               nccl_.Describe(r, lr.comm);
    }
  }
  ncclResult_t r = nccl_.GroupEnd();
  if (!failed.empty()) return {StepEnd::kFail, failed};
  if (r != ncclSuccess && r != ncclInProgress) {
    return {StepEnd::kFail, "ncclGroupEnd (init): " + nccl_.Describe(r)};
  }
  return WaitComms(StepDeadline(), "init");
}

Step NcclRun::WaitComms(Deadline deadline, const std::string& step) {
  for (;;) {
    bool ready = true;
    for (const auto& lr : ranks_) {
      if (lr.comm == nullptr)
        return {StepEnd::kFail,
                step + ": rank " + std::to_string(lr.rank) + " has no communicator"};
      ncclResult_t e = ncclSuccess;
      ncclResult_t r = nccl_.CommGetAsyncError(lr.comm, &e);
      if (r != ncclSuccess) e = r;
      if (e == ncclInProgress) {
        ready = false;
      } else if (e != ncclSuccess) {
        return {StepEnd::kFail,
                step + ": rank " + std::to_string(lr.rank) + ": " + nccl_.Describe(e, lr.comm)};
      }
    }
    if (ready) return {};
    if (deadline.Passed()) {
      return {StepEnd::kHang,
              step + ": not done within " + std::to_string(request_.timeout_s) + " s"};
    }
    if (!Pause()) return {StepEnd::kAborted, step + ": aborted by the controller"};
  }
}

Step NcclRun::WaitStreams(Deadline deadline, const std::string& step) {
  for (;;) {
    bool idle = true;
    for (const auto& lr : ranks_) {
      cuda_.CtxSetCurrent(lr.ctx);
      CUresult q = cuda_.StreamQuery(lr.stream);
      if (q == CUDA_ERROR_NOT_READY) {
        idle = false;
      } else if (q != CUDA_SUCCESS) {
        gpus_busy_ = true;  // a sticky CUDA error: do not trust the context
        return {StepEnd::kFail,
                step + ": GPU " + std::to_string(lr.ordinal) + ": " + cuda_.Describe(q)};
      }
      ncclResult_t e = ncclSuccess;
      if (lr.comm != nullptr) nccl_.CommGetAsyncError(lr.comm, &e);
      if (e != ncclSuccess && e != ncclInProgress) {
        return {StepEnd::kFail,
                step + ": rank " + std::to_string(lr.rank) + ": " + nccl_.Describe(e, lr.comm)};
      }
    }
    if (idle) return {};
    if (deadline.Passed()) {
      gpus_busy_ = true;
      return {StepEnd::kHang,
              step + ": not done within " + std::to_string(request_.timeout_s) + " s"};
    }
    if (!Pause()) {
      gpus_busy_ = true;
      return {StepEnd::kAborted, step + ": aborted by the controller"};
    }
  }
}

bool NcclRun::StreamsIdle(Deadline deadline) const {
  for (;;) {
    bool idle = true;
    for (const auto& lr : ranks_) {
      if (lr.stream == nullptr) continue;
      cuda_.CtxSetCurrent(lr.ctx);
      CUresult q = cuda_.StreamQuery(lr.stream);
      if (q == CUDA_ERROR_NOT_READY) idle = false;
      if (q != CUDA_SUCCESS && q != CUDA_ERROR_NOT_READY) return false;
    }
    if (idle) return true;
    if (deadline.Passed()) return false;
    std::this_thread::sleep_for(Millis(5));
  }
}

bool NcclRun::Pause() {
  Deadline tick = Deadline::In(Millis(1));
  std::optional<Json> control = ctx_.NextControl(tick);
  if (control) {
    if (control->value("cmd", "") == "abort") return false;
    ctx_.Log("warn", "nccl: ignored control line " + control->dump());
    return true;
  }
  // No line before the tick: a timeout. No line and time left: stdin closed.
  return tick.Passed();
}

Step NcclRun::Alloc(uint64_t bytes) {
  for (auto& lr : ranks_) {
    cuda_.CtxSetCurrent(lr.ctx);
    if (Step s = Cuda(cuda_.MemAlloc(&lr.send, bytes), "cuMemAlloc " + Bytes(bytes), lr); !s.ok())
      return s;
    if (Step s = Cuda(cuda_.MemAlloc(&lr.recv, bytes), "cuMemAlloc " + Bytes(bytes), lr); !s.ok())
      return s;
  }
  return {};
}

void NcclRun::FreeBuffers() {
  for (auto& lr : ranks_) {
    if (lr.send == 0 && lr.recv == 0) continue;
    cuda_.CtxSetCurrent(lr.ctx);
    if (lr.send) cuda_.MemFree(lr.send);
    if (lr.recv) cuda_.MemFree(lr.recv);
    lr.send = lr.recv = 0;
  }
}

Step NcclRun::Fill(uint64_t bytes, const NcclPattern& pattern, NcclDtype dtype) {
  const size_t esize = NcclDtypeBytes(dtype);
  std::vector<uint32_t> host(std::min(bytes, kChunkBytes) / sizeof(uint32_t));
  for (auto& lr : ranks_) {
    cuda_.CtxSetCurrent(lr.ctx);
    for (uint64_t off = 0; off < bytes; off += kChunkBytes) {
      uint64_t n = std::min(kChunkBytes, bytes - off);
      pattern.Fill(lr.rank, off / esize, n / esize, host.data());
      if (Step s = Cuda(cuda_.MemcpyHtoD(lr.send + off, host.data(), n), "cuMemcpyHtoD", lr);
          !s.ok())
        return s;
    }
  }
  return ClearRecv(bytes, dtype);
}

Step NcclRun::ClearRecv(uint64_t bytes, NcclDtype dtype) {
  // Two 16-bit NaNs for half and bf16 alike (0x7fc0 is a NaN in both).
  const unsigned int nan_bits = dtype == NcclDtype::kFloat ? kNanBits : kNan16x2Bits;
  for (auto& lr : ranks_) {
    cuda_.CtxSetCurrent(lr.ctx);
    Step s = Cuda(cuda_.MemsetD32(lr.recv, nan_bits, bytes / sizeof(uint32_t)), "cuMemsetD32", lr);
    if (!s.ok()) return s;
  }
  return {};
}

// The send buffers keep the pattern (the AllReduce is out of place), so
// every iteration's expected sums are the same; the receive buffers go back
// to NaN before each, so an iteration that writes nothing cannot pass on
// the previous one's output.
Step NcclRun::RunCheckedIters(uint64_t bytes, const NcclPattern& pattern, NcclDtype dtype,
                              const std::string& step, Json* result) {
  const uint64_t count = bytes / NcclDtypeBytes(dtype);
  NcclCheckedIters checks;
  for (int it = 1; it <= request_.check_iters; ++it) {
    const std::string name = step + " (checked iteration " + std::to_string(it) + ")";
    if (Step s = ClearRecv(bytes, dtype); !s.ok()) return s;
    Deadline d = StepDeadline();
    if (Step s = Launch(1, count, dtype, d, name); !s.ok()) return s;
    if (Step s = WaitStreams(d, name); !s.ok()) return s;
    size_t wrong = 0;
    Json first;
    if (Step s = Check(bytes, pattern, dtype, &wrong, &first); !s.ok()) return s;
    checks.Add(wrong, first);
  }
  checks.AddTo(result);
  return {};
}

Step NcclRun::Launch(int iters, uint64_t count, NcclDtype dtype, Deadline deadline,
                     const std::string& step) {
  for (int it = 0; it < iters; ++it) {
    nccl_.GroupStart();
    std::string failed;
    for (auto& lr : ranks_) {
      cuda_.CtxSetCurrent(lr.ctx);
      ncclResult_t r =
          nccl_.AllReduce(reinterpret_cast<const void*>(lr.send), reinterpret_cast<void*>(lr.recv),
                          count, NcclDataType(dtype), ncclSum, lr.comm, lr.stream);
      if (r != ncclSuccess && r != ncclInProgress && failed.empty()) {
        failed = step + ": ncclAllReduce rank " + std::to_string(lr.rank) + ": " +
                 nccl_.Describe(r, lr.comm);
      }
    }
    ncclResult_t r = nccl_.GroupEnd();
    if (!failed.empty()) return {StepEnd::kFail, failed};
    if (r == ncclInProgress) {
      // Non-blocking comms: the next call must wait until this one is
      // enqueued (connections are set up lazily, so this can wait on peers).
      if (Step s = WaitComms(deadline, step); !s.ok()) return s;
    } else if (r != ncclSuccess) {
      return {StepEnd::kFail, step + ": ncclGroupEnd: " + nccl_.Describe(r)};
    }
  }
  return {};
}

Step NcclRun::Check(uint64_t bytes, const NcclPattern& pattern, NcclDtype dtype, size_t* mismatches,
                    Json* first) {
  const size_t esize = NcclDtypeBytes(dtype);
  std::vector<uint32_t> host(std::min(bytes, kChunkBytes) / sizeof(uint32_t));
  *mismatches = 0;
  for (auto& lr : ranks_) {
    cuda_.CtxSetCurrent(lr.ctx);
    for (uint64_t off = 0; off < bytes; off += kChunkBytes) {
      uint64_t n = std::min(kChunkBytes, bytes - off);
      if (Step s = Cuda(cuda_.MemcpyDtoH(host.data(), lr.recv + off, n), "cuMemcpyDtoH", lr);
          !s.ok())
        return s;
      size_t at = 0;
      float got = 0;
      size_t bad = pattern.CountMismatches(host.data(), n / esize, off / esize, &at, &got);
      if (bad > 0 && *mismatches == 0) {
        *first = {{"rank", lr.rank}, {"index", at}, {"got", got}, {"want", pattern.Expected(at)}};
      }
      *mismatches += bad;
    }
  }
  return {};
}

Step NcclRun::RunSize(uint64_t bytes, NcclDtype dtype, Json* result) {
  const uint64_t count = bytes / NcclDtypeBytes(dtype);
  const std::string step = NcclStepName(bytes, dtype);
  const NcclPattern pattern(dtype, request_.nranks);
  FreeBuffers();
  if (Step s = Alloc(bytes); !s.ok()) return s;
  if (Step s = Fill(bytes, pattern, dtype); !s.ok()) return s;
  if (request_.warmup > 0) {
    Deadline d = StepDeadline();
    if (Step s = Launch(request_.warmup, count, dtype, d, step + " (warmup)"); !s.ok()) return s;
    if (Step s = WaitStreams(d, step + " (warmup)"); !s.ok()) return s;
  }
  Deadline d = StepDeadline();
  for (auto& lr : ranks_) {
    cuda_.CtxSetCurrent(lr.ctx);
    if (Step s = Cuda(cuda_.EventRecord(lr.start, lr.stream), "cuEventRecord", lr); !s.ok())
      return s;
  }
  if (Step s = Launch(request_.iters, count, dtype, d, step); !s.ok()) return s;
  for (auto& lr : ranks_) {
    cuda_.CtxSetCurrent(lr.ctx);
    if (Step s = Cuda(cuda_.EventRecord(lr.stop, lr.stream), "cuEventRecord", lr); !s.ok())
      return s;
  }
  if (Step s = WaitStreams(d, step); !s.ok()) return s;

  // The slowest local GPU sets the time, as every rank waits for it.
  double worst_ms = 0;
  Json per_gpu = Json::array();
  for (auto& lr : ranks_) {
    cuda_.CtxSetCurrent(lr.ctx);
    float ms = 0;
    if (Step s = Cuda(cuda_.EventElapsedTime(&ms, lr.start, lr.stop), "cuEventElapsedTime", lr);
        !s.ok())
      return s;
    worst_ms = std::max(worst_ms, static_cast<double>(ms));
    per_gpu.push_back(1000.0 * ms / request_.iters);
  }
  size_t mismatches = 0;
  Json first;
  if (Step s = Check(bytes, pattern, dtype, &mismatches, &first); !s.ok()) return s;
  double seconds = worst_ms / 1000.0 / request_.iters;
  *result = {{"bytes", bytes},
             {"count", count},
             {"dtype", NcclDtypeName(dtype)},
             {"op", "sum"},
             {"nranks", request_.nranks},
             {"warmup", request_.warmup},
             {"iters", request_.iters},
             {"time_us", seconds * 1e6},
             {"time_us_per_gpu", per_gpu},
             {"algbw", AlgBandwidthGBps(bytes, seconds)},
             {"busbw", BusBandwidthGBps(Collective::kAllReduce, bytes, seconds, request_.nranks)},
             {"data_ok", mismatches == 0},
             {"mismatches", mismatches}};
  if (mismatches > 0) (*result)["first_mismatch"] = first;
  if (Step s = RunCheckedIters(bytes, pattern, dtype, step, result); !s.ok()) return s;
  FreeBuffers();
  return {};
}

Step NcclRun::Finish() {
  if (nccl_.CommFinalize != nullptr) {
    for (auto& lr : ranks_) {
      if (lr.comm == nullptr) continue;
      cuda_.CtxSetCurrent(lr.ctx);
      ncclResult_t r = nccl_.CommFinalize(lr.comm);
      if (r != ncclSuccess && r != ncclInProgress) {
        AbortAll();
        return {StepEnd::kFail, "ncclCommFinalize: " + nccl_.Describe(r, lr.comm)};
      }
    }
    if (Step s = WaitComms(StepDeadline(), "finalize"); !s.ok()) {
      AbortAll();
      return s;
    }
  }
  for (auto& lr : ranks_) {
    if (lr.comm == nullptr) continue;
    cuda_.CtxSetCurrent(lr.ctx);
    nccl_.CommDestroy(lr.comm);
    lr.comm = nullptr;
  }
  return {};
}

void NcclRun::AbortAll() {
  bool aborted = false;
  for (auto& lr : ranks_) {
    if (lr.comm == nullptr) continue;
    cuda_.CtxSetCurrent(lr.ctx);
    nccl_.CommAbort(lr.comm);
    lr.comm = nullptr;
    aborted = true;
  }
  // Abort makes NCCL's kernels return; give them a moment before deciding
  // whether the buffers can be freed.
  if (aborted) gpus_busy_ = !StreamsIdle(Deadline::In(kIdleWait));
}

}  // namespace cc::agent
