// The element types the agent's `nccl` command reduces (nccl-tests' -d) and,
// per type, a data pattern whose AllReduce sum is exact in that type, so
// that the data check can demand equality. No CUDA, no NCCL, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/gpu_abi.h"

namespace cc::agent {

enum class NcclDtype { kFloat, kHalf, kBf16 };

// "float", "half", "bf16": nccl-tests' names.
const char* NcclDtypeName(NcclDtype t);
// nullopt for any other name.
std::optional<NcclDtype> ParseNcclDtype(const std::string& name);
// ncclFloat32, ncclFloat16, ncclBfloat16.
ncclDataType_t NcclDataType(NcclDtype t);
// Bytes per element: 4, 2, 2.
size_t NcclDtypeBytes(NcclDtype t);

// IEEE binary16 and bfloat16 from a float, rounded to nearest, ties to even;
// overflow gives infinity, a NaN stays a (quiet) NaN. Back to float is exact.
uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);
uint16_t FloatToBf16(float f);
float Bf16ToFloat(uint16_t b);

// At most this many ranks contribute to one element of a 16-bit pattern:
// every value is in 1..8, so every partial sum stays <= 256, the largest
// integer up to which bfloat16 (8 significant bits) counts exactly.
inline constexpr int kMax16BitContributors = 32;

// The data of one dtype in a communicator of `nranks`.
//   float: NcclFillValue / NcclExpectedSum (nccl_request.h), unchanged.
//   half, bf16: with stride = ceil(nranks / 32), rank r fills element i with
//     1 + (r + i) % 8 when r % stride == i % stride, else 0. Each element
//     thus sums at most 32 values of at most 8; every rank still meets every
//     residue of i, so a rank whose data is lost shows in its elements.
// REQUIRES: 1 <= nranks <= kMaxExactRanks.
class NcclPattern {
 public:
  NcclPattern(NcclDtype dtype, int nranks);

  float Value(int rank, size_t i) const;
  // The sum over all ranks of Value(rank, i).
  float Expected(size_t i) const;
  // Elements [first, first + count) of `rank`'s send buffer, encoded in the
  // dtype, into out (count * NcclDtypeBytes bytes).
  void Fill(int rank, size_t first, size_t count, void* out) const;
  // Elements of got[0..count) (dtype-encoded, element offset first_index)
  // that differ from Expected; the first such index and its value (as a
  // float) into *first_bad and *first_got, if any.
  size_t CountMismatches(const void* got, size_t count, size_t first_index, size_t* first_bad,
                         float* first_got) const;

 private:
  float Decode(const void* data, size_t k) const;

  NcclDtype dtype_;
  int nranks_;
  size_t stride_ = 1;
  std::vector<float> expected_;  // 16-bit: Expected(i) is expected_[i % size]
};

}  // namespace cc::agent
