// The pure half of the agent's `nccl` command: its request arguments, the
// unique-id text form, the data pattern whose sum is exact, the debug
// environment NCCL gets, and the log cap. No CUDA, no NCCL, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "agent/nccl_dtype.h"
#include "common/status.h"

namespace cc::agent {

// NCCL's ncclUniqueId is 128 bytes (NCCL_UNIQUE_ID_BYTES in nccl.h).
inline constexpr size_t kNcclUniqueIdBytes = 128;
// Above this many ranks a float sum of the pattern below is no longer exact
// (it must stay under 2^24).
inline constexpr int kMaxExactRanks = 4096;
inline constexpr uint64_t kMaxNcclBytes = uint64_t{16} << 30;  // per buffer
inline constexpr size_t kMaxNcclLogBytes = size_t{1} << 20;

struct NcclRequest {
  int rank_base = 0;            // global rank of gpus[0]; gpus[i] gets rank_base + i
  int nranks = 0;               // ranks in the whole communicator
  std::vector<int> gpus = {0};  // local CUDA device ordinals
  // 256 hex digits; empty: this process holds rank 0, creates the id and
  // emits it (result "nccl_id") before it waits for the others.
  std::string unique_id_hex;
  std::vector<uint64_t> sizes = {uint64_t{1} << 20};  // bytes, multiples of 4
  // Element types, each run over every size in this order (nccl-tests' -d).
  std::vector<NcclDtype> dtypes = {NcclDtype::kFloat};
  int warmup = 5;
  int iters = 20;
  // Burn-in: after the timed iterations of each size, this many more
  // AllReduces, each followed by the exact data check of its output. Not
  // timed; each has its own timeout_s deadline.
  int check_iters = 0;
  double timeout_s = 60;  // per step: init, and each size's collectives
  std::vector<std::pair<std::string, std::string>> env;  // NCCL_*/CUDA_*
  std::vector<std::string> library_paths;
};

// Reads the request's args. kBadArgument naming the field for a wrong type
// or value: nranks missing or < 1 or > kMaxExactRanks; a negative or
// repeated GPU; rank_base + gpus beyond nranks; no unique_id while rank_base
// != 0; a size that is 0, not a multiple of 4 or above kMaxNcclBytes;
// dtypes empty, repeated or other than "float", "half", "bf16"; iters < 1;
// check_iters < 0 or above 10000000; timeout_s <= 0; an env name that is
// not NCCL_* or CUDA_*.
Result<NcclRequest> ParseNcclRequest(const nlohmann::json& args);

std::string HexEncode(const void* data, size_t n);
// Exactly `bytes` bytes from 2*bytes hex digits; kBadArgument otherwise.
Result<std::vector<uint8_t>> HexDecode(const std::string& hex, size_t bytes);

// Rank r's element i. Small integers, so every partial sum NCCL forms, in
// any order, is exact in float: the data check can demand equality.
inline float NcclFillValue(int rank, size_t i) {
  return static_cast<float>((rank + 1) + static_cast<int>(i % 7));
}
// The AllReduce (sum) of NcclFillValue over ranks 0..nranks-1.
inline float NcclExpectedSum(int nranks, size_t i) {
  return static_cast<float>(nranks * (nranks + 1) / 2 + nranks * static_cast<int>(i % 7));
}
// Elements of got[0..count) (element offset `first_index`) that differ from
// NcclExpectedSum; *first_bad gets the first such index, if any.
size_t CountMismatches(const float* got, size_t count, size_t first_index, int nranks,
                       size_t* first_bad);

// The environment set before NCCL is loaded: the request's variables, then
// NCCL_DEBUG=INFO, NCCL_DEBUG_FILE=<log_dir>/nccl-%h-%p.log,
// NCCL_DEBUG_SUBSYS with INIT and NET added to whatever was asked, and
// NCCL_COMM_BLOCKING=0 (a blocking init could not be aborted).
std::vector<std::pair<std::string, std::string>> NcclEnvironment(const NcclRequest& request,
                                                                 const std::string& log_dir);

// The entries of library_paths meant for `lib` ("libcuda.so", "libnccl.so"):
// directories, and files whose name starts with `lib`. A file given for
// the other library is dropped, so it is not opened as the wrong one.
std::vector<std::string> LibraryPathsFor(const std::vector<std::string>& paths,
                                         const std::string& lib);

// At most `cap` bytes: the head and the tail of the text with a marker
// line saying how much was cut. Paths are logged at the start, errors at
// the end; both matter.
std::string CapLog(const std::string& text, size_t cap);

}  // namespace cc::agent
